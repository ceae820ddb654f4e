#pragma once
// Checked reads of the keys of one TOML table. A missing key leaves its target alone,
// so the default stays. A key of the wrong type or out of range is reported with its
// line and also leaves the target alone, so that reading goes on and every problem of
// the file is found in one pass. Each read returns true when it stored a value.

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "config/file_context.hpp"

namespace framecl::config {

// "an integer", "a string", ... for "expected an integer, got a string".
std::string_view typeName(const toml::node& node);

// `element` of an array as a table; otherwise reports "key: expected a table" and
// returns null.
const toml::table* tableElement(FileContext& file, const toml::node& element,
                                const std::string& key);

class TableReader {
public:
    // `prefix` is the dotted key of the table ("gpu", "client_class[1]"); empty for the root.
    TableReader(FileContext& file, const toml::table& table, std::string prefix);

    FileContext& file() const { return file_; }
    const toml::node* find(std::string_view key) const { return table_.get(key); }
    // The dotted key of `key` in this table, for messages.
    std::string keyPath(std::string_view key) const;
    void report(const toml::node& node, std::string_view key, std::string_view what) const;
    // Reports a problem of the table as a whole, at its start.
    void reportTable(std::string_view what) const;

    // Reports "missing required key" at the table unless `key` is there (of any type).
    void requireKey(std::string_view key) const;

    // Reports every key not in `known` ("did you mean ...?" when one is close).
    void refuseUnknownKeys(std::initializer_list<std::string_view> known) const;

    bool readBool(std::string_view key, bool& out) const;
    bool readString(std::string_view key, std::string& out) const;
    bool readNonEmptyString(std::string_view key, std::string& out) const;
    // Accepts an integer or a float in (`above`, `at_most`].
    bool readNumber(std::string_view key, double& out, double above, double at_most) const;
    bool readPath(std::string_view key, std::filesystem::path& out) const;
    bool readPathList(std::string_view key, std::vector<std::filesystem::path>& out) const;
    bool readStringList(std::string_view key, std::vector<std::string>& out) const;
    const toml::table* readTable(std::string_view key) const;
    // `expected` describes the array in the message: "an array of strings".
    const toml::array* readArray(std::string_view key, std::string_view expected) const;

    template <typename T>
    bool readInteger(std::string_view key, T& out, int64_t min, int64_t max) const
    {
        const std::optional<int64_t> value = integerInRange(key, min, max);
        if (value)
            out = static_cast<T>(*value);
        return value.has_value();
    }

    template <typename E>
    bool readChoice(std::string_view key, E& out,
                    std::initializer_list<std::pair<std::string_view, E>> choices) const
    {
        std::vector<std::string_view> names;
        for (const auto& choice : choices)
            names.push_back(choice.first);
        const std::optional<std::size_t> index = choiceIndex(key, names);
        if (index)
            out = std::data(choices)[*index].second;
        return index.has_value();
    }

private:
    std::optional<int64_t> integerInRange(std::string_view key, int64_t min, int64_t max) const;
    std::optional<std::size_t> choiceIndex(std::string_view key,
                                           const std::vector<std::string_view>& names) const;
    // The string elements of the array under `key`, each reported when not a non-empty string.
    std::optional<std::vector<std::string>> nonEmptyStrings(std::string_view key) const;

    FileContext& file_;
    const toml::table& table_;
    std::string prefix_;
};

} // namespace framecl::config
