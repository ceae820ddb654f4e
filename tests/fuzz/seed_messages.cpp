// Writes tests/fuzz/corpus/server_message: one well-formed message of each type a
// client sends on the ZeroMQ socket, so that fuzzing starts past the envelope's
// verification. Run again when protocol/framecl.fbs changes:
//   build-asan/tests/fuzz/fuzz-seed-messages tests/fuzz/corpus/server_message
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <drm_fourcc.h>

#include "envelope.hpp"

using namespace framecl;

namespace {

template <typename T>
void write(const std::filesystem::path& dir, const char* name, flatbuffers::FlatBufferBuilder& builder,
           flatbuffers::Offset<T> message)
{
    const auto bytes = protocol::finishEnvelope(builder, message);
    std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    {
        flatbuffers::FlatBufferBuilder b;
        write(dir, "hello", b, wire::CreateHelloDirect(b, protocol::protocol_version, "seed"));
    }
    {
        flatbuffers::FlatBufferBuilder b;
        write(dir, "goodbye", b, wire::CreateGoodbye(b));
    }
    {
        flatbuffers::FlatBufferBuilder b;
        const std::vector<uint32_t> ids{1, 2};
        write(dir, "release-buffers", b, wire::CreateReleaseBuffersDirect(b, 7, &ids));
    }
    {
        flatbuffers::FlatBufferBuilder b;
        std::vector<flatbuffers::Offset<wire::Parameter>> overrides{
            wire::CreateParameterDirect(b, "threshold", 40), // an int
            wire::CreateParameterDirect(b, "scale", flatbuffers::nullopt, 0.5),
            wire::CreateParameterDirect(b, "l2", flatbuffers::nullopt, flatbuffers::nullopt, true),
            wire::CreateParameterDirect(b, "variant", flatbuffers::nullopt, flatbuffers::nullopt, flatbuffers::nullopt,
                                        "auto")};
        const auto input = wire::CreateFrameLayout(b, DRM_FORMAT_ABGR8888, 64, 48);
        write(dir, "open-session-edges", b,
              wire::CreateOpenSessionDirect(b, 8, "edges", input, &overrides, wire::Backpressure::DropOldest, 1000));
    }
    {
        flatbuffers::FlatBufferBuilder b;
        const auto input = wire::CreateFrameLayout(b, DRM_FORMAT_NV12, 32, 32);
        write(dir, "open-session-copy", b, wire::CreateOpenSessionDirect(b, 9, "copy", input));
    }
    {
        flatbuffers::FlatBufferBuilder b;
        write(dir, "close-session", b, wire::CreateCloseSession(b, 10, 1));
    }
    {
        flatbuffers::FlatBufferBuilder b;
        write(dir, "stats", b, wire::CreateStatsRequest(b, 11));
    }
    {
        flatbuffers::FlatBufferBuilder b;
        write(dir, "trace", b, wire::CreateTraceRequest(b, 12, 1));
    }
    {
        flatbuffers::FlatBufferBuilder b;
        write(dir, "submit-on-zeromq", b, wire::CreateSubmit(b, 1, 1, 2, 3));
    }
    return 0;
}
