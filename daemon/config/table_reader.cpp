#include "config/table_reader.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h> // fmt::join

#include "base/closest_name.hpp"

namespace framecl::config {

namespace fs = std::filesystem;

namespace {

std::string unknownKeyMessage(const toml::node& node, std::string_view key_path,
                              std::string_view suggestion)
{
    std::string what;
    if (node.is_table())
        what = fmt::format("unknown table [{}]", key_path);
    else if (node.is_array_of_tables())
        what = fmt::format("unknown table [[{}]]", key_path);
    else
        what = "unknown key";
    if (!suggestion.empty())
        what += fmt::format("; did you mean '{}'?", suggestion);
    return what;
}

std::string_view closestKey(std::string_view key, std::initializer_list<std::string_view> known)
{
    return closestName(key, std::span<const std::string_view>(known.begin(), known.size()));
}

} // namespace

std::string_view typeName(const toml::node& node)
{
    switch (node.type()) {
    case toml::node_type::table:
        return "a table";
    case toml::node_type::array:
        return "an array";
    case toml::node_type::string:
        return "a string";
    case toml::node_type::integer:
        return "an integer";
    case toml::node_type::floating_point:
        return "a float";
    case toml::node_type::boolean:
        return "a boolean";
    case toml::node_type::date:
        return "a date";
    case toml::node_type::time:
        return "a time";
    case toml::node_type::date_time:
        return "a date-time";
    case toml::node_type::none:
        break;
    }
    return "nothing";
}

const toml::table* tableElement(FileContext& file, const toml::node& element,
                                const std::string& key)
{
    if (!element.is_table())
        file.report(element.source(), key,
                    fmt::format("expected a table, got {}", typeName(element)));
    return element.as_table();
}

TableReader::TableReader(FileContext& file, const toml::table& table, std::string prefix)
    : file_(file), table_(table), prefix_(std::move(prefix))
{
}

std::string TableReader::keyPath(std::string_view key) const
{
    return prefix_.empty() ? std::string(key) : fmt::format("{}.{}", prefix_, key);
}

void TableReader::report(const toml::node& node, std::string_view key, std::string_view what) const
{
    file_.report(node.source(), keyPath(key), what);
}

void TableReader::reportTable(std::string_view what) const
{
    file_.report(table_.source(), prefix_, what);
}

void TableReader::requireKey(std::string_view key) const
{
    if (!find(key))
        reportTable(fmt::format("missing required key '{}'", key));
}

void TableReader::refuseUnknownKeys(std::initializer_list<std::string_view> known) const
{
    for (auto&& [key, node] : table_) {
        if (std::find(known.begin(), known.end(), key.str()) != known.end())
            continue;
        const std::string path = keyPath(key.str());
        file_.report(key.source(), path,
                     unknownKeyMessage(node, path, closestKey(key.str(), known)));
    }
}

bool TableReader::readBool(std::string_view key, bool& out) const
{
    const toml::node* node = find(key);
    if (!node)
        return false;
    if (!node->is_boolean()) {
        report(*node, key, fmt::format("expected a boolean, got {}", typeName(*node)));
        return false;
    }
    out = node->as_boolean()->get();
    return true;
}

bool TableReader::readString(std::string_view key, std::string& out) const
{
    const toml::node* node = find(key);
    if (!node)
        return false;
    if (!node->is_string()) {
        report(*node, key, fmt::format("expected a string, got {}", typeName(*node)));
        return false;
    }
    out = node->as_string()->get();
    return true;
}

bool TableReader::readNonEmptyString(std::string_view key, std::string& out) const
{
    std::string value;
    if (!readString(key, value))
        return false;
    if (value.empty()) {
        report(*find(key), key, "must not be empty");
        return false;
    }
    out = std::move(value);
    return true;
}

std::optional<int64_t> TableReader::integerInRange(std::string_view key, int64_t min,
                                                   int64_t max) const
{
    const toml::node* node = find(key);
    if (!node)
        return std::nullopt;
    if (!node->is_integer()) {
        report(*node, key, fmt::format("expected an integer, got {}", typeName(*node)));
        return std::nullopt;
    }
    const int64_t value = node->as_integer()->get();
    if (value < min || value > max) {
        report(*node, key, fmt::format("must be between {} and {}, got {}", min, max, value));
        return std::nullopt;
    }
    return value;
}

bool TableReader::readNumber(std::string_view key, double& out, double above,
                             double at_most) const
{
    const toml::node* node = find(key);
    if (!node)
        return false;
    if (!node->is_number()) {
        report(*node, key, fmt::format("expected a number, got {}", typeName(*node)));
        return false;
    }
    const double value = node->value<double>().value();
    // Written so that nan fails too.
    if (!(value > above && value <= at_most)) {
        report(*node, key,
               fmt::format("must be greater than {} and at most {}, got {}", above, at_most,
                           value));
        return false;
    }
    out = value;
    return true;
}

std::optional<std::size_t>
TableReader::choiceIndex(std::string_view key, const std::vector<std::string_view>& names) const
{
    std::string value;
    if (!readString(key, value))
        return std::nullopt;
    const auto match = std::find(names.begin(), names.end(), value);
    if (match == names.end()) {
        report(*find(key), key,
               fmt::format("'{}' is not allowed; expected one of {}", value,
                           fmt::join(names, ", ")));
        return std::nullopt;
    }
    return static_cast<std::size_t>(match - names.begin());
}

bool TableReader::readPath(std::string_view key, fs::path& out) const
{
    std::string written;
    if (!readNonEmptyString(key, written))
        return false;
    out = file_.resolve(written);
    return true;
}

std::optional<std::vector<std::string>> TableReader::nonEmptyStrings(std::string_view key) const
{
    const toml::array* array = readArray(key, "an array of strings");
    if (!array)
        return std::nullopt;
    std::vector<std::string> values;
    bool all_good = true;
    for (std::size_t i = 0; i < array->size(); ++i) {
        const toml::node& element = *array->get(i);
        const std::string element_key = fmt::format("{}[{}]", key, i);
        if (!element.is_string()) {
            report(element, element_key,
                   fmt::format("expected a string, got {}", typeName(element)));
            all_good = false;
        } else if (element.as_string()->get().empty()) {
            report(element, element_key, "must not be empty");
            all_good = false;
        } else {
            values.push_back(element.as_string()->get());
        }
    }
    if (!all_good)
        return std::nullopt;
    return values;
}

bool TableReader::readPathList(std::string_view key, std::vector<fs::path>& out) const
{
    const std::optional<std::vector<std::string>> written = nonEmptyStrings(key);
    if (!written)
        return false;
    out.clear();
    for (const std::string& path : *written)
        out.push_back(file_.resolve(path));
    return true;
}

bool TableReader::readStringList(std::string_view key, std::vector<std::string>& out) const
{
    std::optional<std::vector<std::string>> values = nonEmptyStrings(key);
    if (!values)
        return false;
    out = std::move(*values);
    return true;
}

const toml::table* TableReader::readTable(std::string_view key) const
{
    const toml::node* node = find(key);
    if (node && !node->is_table())
        report(*node, key, fmt::format("expected a table, got {}", typeName(*node)));
    return node ? node->as_table() : nullptr;
}

const toml::array* TableReader::readArray(std::string_view key,
                                          std::string_view expected) const
{
    const toml::node* node = find(key);
    if (node && !node->is_array())
        report(*node, key, fmt::format("expected {}, got {}", expected, typeName(*node)));
    return node ? node->as_array() : nullptr;
}

} // namespace framecl::config
