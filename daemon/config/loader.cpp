#include "config/loader.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "base/log.hpp"
#include "base/read_file.hpp"
#include "config/file_context.hpp"
#include "config/main_tables.hpp"
#include "config/pipeline_tables.hpp"
#include "config/table_reader.hpp"

namespace framecl::config {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view array_of_pipelines = "an array of tables ([[pipeline]])";
constexpr std::string_view array_of_client_classes = "an array of tables ([[client_class]])";

std::string cannotRead(const fs::path& path, std::error_code error)
{
    return fmt::format("{}: cannot read: {}", path.string(), error.message());
}

// toml++ stops at the first syntax error, so a file reports at most one.
std::optional<toml::table> parseToml(FileContext& file, std::string_view text)
{
    try {
        return toml::parse(text);
    } catch (const toml::parse_error& error) {
        file.reportSyntaxError(error);
        return std::nullopt;
    }
}

void applyPathDefaults(const PathDefaults& defaults, DaemonConfig& daemon)
{
    daemon.socket = defaults.socket;
    daemon.buffer_socket = defaults.buffer_socket;
    daemon.plugin_dirs = defaults.plugin_dirs;
    daemon.kernel_dirs = defaults.kernel_dirs;
    daemon.pipeline_dirs = defaults.pipeline_dirs;
    daemon.cache_dir = defaults.cache_dir;
}

void readMainTable(FileContext& file, const toml::table& root, Config& config)
{
    const TableReader reader(file, root, "");
    reader.refuseUnknownKeys({"daemon", "gpu", "limits", "client_class", "pipeline"});
    // Read even when absent, so that default socket paths are checked too. (Not with
    // `?:`, which would copy the table, and toml++ copies drop source positions.)
    const toml::table no_daemon_table;
    const toml::table* daemon = reader.readTable("daemon");
    readDaemonTable(file, daemon ? *daemon : no_daemon_table, config.daemon);
    if (const toml::table* gpu = reader.readTable("gpu"))
        readGpuTable(file, *gpu, config.gpu);
    if (const toml::table* limits = reader.readTable("limits"))
        readLimitsTable(file, *limits, config.limits);
    if (const toml::array* classes = reader.readArray("client_class", array_of_client_classes))
        readClientClasses(file, *classes, config.client_classes);
    if (const toml::array* pipelines = reader.readArray("pipeline", array_of_pipelines))
        readPipelines(file, *pipelines, config.pipelines);
}

void appendProblems(FileContext& file, std::vector<std::string>& problems)
{
    for (std::string& problem : file.takeProblems())
        problems.push_back(std::move(problem));
}

// A file of a pipeline directory holds pipelines and nothing else: daemon settings
// spread over several files would make the effective config hard to see.
void readPipelineTables(FileContext& file, const toml::table& root,
                        std::vector<Pipeline>& pipelines)
{
    for (auto&& [key, node] : root)
        if (key.str() != "pipeline")
            file.report(key.source(), key.str(),
                        "a file in a pipeline directory may hold only [[pipeline]] tables");
    const TableReader reader(file, root, "");
    if (const toml::array* array = reader.readArray("pipeline", array_of_pipelines))
        readPipelines(file, *array, pipelines);
}

void readPipelineFile(const fs::path& path, std::vector<std::string>& problems,
                      std::vector<Pipeline>& pipelines)
{
    const tl::expected<std::string, std::error_code> text = readFile(path);
    if (!text) {
        problems.push_back(cannotRead(path, text.error()));
        return;
    }
    FileContext file(path);
    if (const std::optional<toml::table> root = parseToml(file, *text))
        readPipelineTables(file, *root, pipelines);
    appendProblems(file, problems);
}

// The `*.toml` regular files of `directory`, sorted by name; nullopt when the directory
// does not exist, which is not an error (a board may ship no extra pipelines).
std::optional<std::vector<fs::path>> listPipelineFiles(const fs::path& directory,
                                                       std::vector<std::string>& problems)
{
    std::error_code ec;
    fs::directory_iterator entry(directory, ec);
    if (ec == std::errc::no_such_file_or_directory) {
        framecl::log::get("config")->debug("pipeline directory {} does not exist; skipped",
                                           directory.string());
        return std::nullopt;
    }
    std::vector<fs::path> files;
    for (; !ec && entry != fs::directory_iterator(); entry.increment(ec)) {
        // A dangling link is kept: reading it then names the file and the reason.
        std::error_code status_ec;
        if (entry->path().extension() == ".toml" && !entry->is_directory(status_ec))
            files.push_back(entry->path());
    }
    if (ec) {
        problems.push_back(fmt::format("{}: cannot read pipeline directory: {}",
                                       directory.string(), ec.message()));
        return std::nullopt;
    }
    std::sort(files.begin(), files.end());
    return files;
}

void readPipelineDirectories(Config& config, std::vector<std::string>& problems)
{
    for (const fs::path& directory : config.daemon.pipeline_dirs) {
        const std::optional<std::vector<fs::path>> files = listPipelineFiles(directory, problems);
        for (const fs::path& path : files.value_or(std::vector<fs::path>{}))
            readPipelineFile(path, problems, config.pipelines);
    }
}

} // namespace

tl::expected<Config, ConfigErrors> parseConfig(std::string_view text, const fs::path& file,
                                               const PathDefaults& defaults)
{
    ConfigErrors errors;
    Config config;
    config.file = fs::absolute(file);
    applyPathDefaults(defaults, config.daemon);
    FileContext main_file(file);
    const std::optional<toml::table> root = parseToml(main_file, text);
    if (root)
        readMainTable(main_file, *root, config);
    appendProblems(main_file, errors.problems);
    // Without a readable main file the pipeline directories are unknown: reading the
    // defaults' would report problems of files the user did not ask for.
    if (root)
        readPipelineDirectories(config, errors.problems);
    if (!errors.problems.empty())
        return tl::unexpected(std::move(errors));
    return config;
}

tl::expected<Config, ConfigErrors> loadConfigFile(const fs::path& file,
                                                  const PathDefaults& defaults)
{
    const tl::expected<std::string, std::error_code> text = readFile(file);
    if (!text)
        return tl::unexpected(ConfigErrors{.problems = {cannotRead(file, text.error())}});
    return parseConfig(*text, file, defaults);
}

} // namespace framecl::config
