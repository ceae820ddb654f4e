#pragma once
// CPU reference for the test plugin `offset` (tests/plugins/offset.cpp), written from
// its documented semantics, not from its kernel.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace framecl::test {

// Each R8 pixel plus `amount`, saturated to 0..255.
inline std::vector<uint8_t> offsetPlane(const std::vector<uint8_t>& r8, int amount)
{
    std::vector<uint8_t> out(r8.size());
    for (size_t i = 0; i < r8.size(); ++i)
        out[i] = uint8_t(std::clamp(int(r8[i]) + amount, 0, 255));
    return out;
}

} // namespace framecl::test
