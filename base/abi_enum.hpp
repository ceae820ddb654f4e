#pragma once
// Enum fields of framecl's C ABI (include/framecl/plugin.h, client.h), read safely. A C
// plugin or caller may store any int in one, but C++ may not load an enum whose value is
// outside its enumerators' range (UBSan: "load of value 42, which is not a valid value
// for type"): the field's bytes are read as its underlying integer instead, and only a
// value naming an enumerator is converted back.

#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

namespace framecl {

// The integer a field of enum type holds, whatever it is.
template <typename Enum> int64_t abiInteger(const Enum& field)
{
    std::underlying_type_t<Enum> raw;
    std::memcpy(&raw, &field, sizeof raw);
    return int64_t(raw);
}

// The field's value where it is one of the enumerators 0 to `last` (the ABI's enums
// number theirs from 0 without gaps), else none.
template <typename Enum> std::optional<Enum> abiEnum(const Enum& field, Enum last)
{
    const int64_t raw = abiInteger(field);
    if (raw < 0 || raw > int64_t(last))
        return std::nullopt;
    return static_cast<Enum>(raw);
}

} // namespace framecl
