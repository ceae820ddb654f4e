// Any bytes a client may send on the ZeroMQ socket (docs/protocol.md): each input goes
// as one message from a client that said Hello and bound its buffer socket, every
// message type reachable once it verifies. The daemon must stay up and keep
// answering: after each input the client asks for stats and must get them (or be told
// to say Hello again after its input was a Goodbye, and then start over).
#include <cstdint>
#include <memory>

#include "fuzz_daemon.hpp"

using namespace framecl;

namespace {

// A pipeline of two stages beside the built-in copy, so that OpenSession with a
// pipeline name from the seed corpus reaches plugins and their parameters.
const char* const pipelines = "[[pipeline]]\nname = \"edges\"\n"
                              "stages = [ { plugin = \"color\", op = \"abgr_to_y\" }, { plugin = \"sobel\" } ]\n";

std::unique_ptr<fuzz::Client> client;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    auto& daemon = fuzz::daemon(pipelines);
    if (!client)
        client = std::make_unique<fuzz::Client>(daemon);
    client->send({data, size});
    if (!client->answersStats())
        client.reset(); // forgotten: the next input starts with a new client
    return 0;
}
