#include "config/pipeline_tables.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/table_reader.hpp"

namespace framecl::config {

namespace {

// The daemon always offers a pass-through pipeline under this name.
constexpr std::string_view builtin_pipeline = "copy";

bool isNameCharacter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
}

std::string formatLocation(const SourceLocation& where)
{
    return fmt::format("{}:{}:{}", where.file.string(), where.line, where.column);
}

// Names travel in OpenSession and on the command line, so they keep to characters
// that need no quoting anywhere.
void readName(const TableReader& entry, const std::vector<Pipeline>& earlier, Pipeline& pipeline)
{
    entry.requireKey("name");
    std::string name;
    if (!entry.readNonEmptyString("name", name))
        return;
    const toml::node* node = entry.find("name");
    if (!std::all_of(name.begin(), name.end(), isNameCharacter)) {
        entry.report(*node, "name",
                     fmt::format("'{}' may hold only letters, digits, '_', '.' and '-'", name));
        return;
    }
    if (name == builtin_pipeline) {
        entry.report(*node, "name",
                     fmt::format("'{}' is reserved for the daemon's built-in pipeline", name));
        return;
    }
    const auto first = std::find_if(earlier.begin(), earlier.end(),
                                    [&](const Pipeline& other) { return other.name == name; });
    if (first != earlier.end()) {
        entry.report(*node, "name",
                     fmt::format("pipeline '{}' is already defined at {}", name,
                                 formatLocation(first->where)));
        return;
    }
    pipeline.name = std::move(name);
}

std::optional<std::vector<double>> readNumbers(FileContext& file, const toml::array& array,
                                               const std::string& key)
{
    std::vector<double> numbers;
    bool all_numbers = true;
    for (std::size_t i = 0; i < array.size(); ++i) {
        const toml::node& element = *array.get(i);
        if (element.is_number()) {
            numbers.push_back(element.value<double>().value());
            continue;
        }
        file.report(element.source(), fmt::format("{}[{}]", key, i),
                    fmt::format("expected a number, got {}", typeName(element)));
        all_numbers = false;
    }
    if (!all_numbers)
        return std::nullopt;
    return numbers;
}

std::optional<ParameterValue> readParameterValue(FileContext& file, const toml::node& node,
                                                 const std::string& key)
{
    switch (node.type()) {
    case toml::node_type::boolean:
        return node.as_boolean()->get();
    case toml::node_type::integer:
        return node.as_integer()->get();
    case toml::node_type::floating_point:
        return node.as_floating_point()->get();
    case toml::node_type::string:
        return node.as_string()->get();
    case toml::node_type::array:
        return readNumbers(file, *node.as_array(), key);
    default:
        file.report(node.source(), key,
                    fmt::format("expected a boolean, an integer, a float, a string or an array "
                                "of numbers, got {}",
                                typeName(node)));
        return std::nullopt;
    }
}

Stage readStage(FileContext& file, const toml::table& table, const std::string& prefix)
{
    const TableReader entry(file, table, prefix);
    Stage stage;
    stage.where = file.locate(table.source());
    entry.requireKey("plugin");
    entry.readNonEmptyString("plugin", stage.plugin);
    for (auto&& [key, node] : table) {
        if (key.str() == "plugin")
            continue;
        std::optional<ParameterValue> value =
            readParameterValue(file, node, entry.keyPath(key.str()));
        if (value)
            stage.parameters.push_back(StageParameter{.key = std::string(key.str()),
                                                      .value = std::move(*value),
                                                      .where = file.locate(node.source())});
    }
    return stage;
}

void readStages(const TableReader& entry, Pipeline& pipeline)
{
    entry.requireKey("stages");
    const toml::array* stages = entry.readArray("stages", "an array of tables");
    if (!stages)
        return;
    if (stages->empty()) {
        entry.report(*stages, "stages", "a pipeline needs at least one stage");
        return;
    }
    for (std::size_t i = 0; i < stages->size(); ++i) {
        const std::string prefix = entry.keyPath(fmt::format("stages[{}]", i));
        if (const toml::table* table = tableElement(entry.file(), *stages->get(i), prefix))
            pipeline.stages.push_back(readStage(entry.file(), *table, prefix));
    }
}

} // namespace

void readPipelines(FileContext& file, const toml::array& array, std::vector<Pipeline>& pipelines)
{
    for (std::size_t i = 0; i < array.size(); ++i) {
        const std::string prefix = fmt::format("pipeline[{}]", i);
        const toml::table* table = tableElement(file, *array.get(i), prefix);
        if (!table)
            continue;
        const TableReader entry(file, *table, prefix);
        entry.refuseUnknownKeys({"name", "stages", "fuse"});
        Pipeline pipeline;
        pipeline.where = file.locate(table->source());
        readName(entry, pipelines, pipeline);
        readStages(entry, pipeline);
        entry.readBool("fuse", pipeline.fuse);
        pipelines.push_back(std::move(pipeline));
    }
}

} // namespace framecl::config
