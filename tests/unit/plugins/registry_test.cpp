// Loading plugins from directories: what loads, what is refused and how it is said.
#include <algorithm>

#include <doctest/doctest.h>

#include "plugin_test_support.hpp"
#include "temp_dir.hpp"

using namespace framecl;
using pipeline::PluginRegistry;
namespace fs = std::filesystem;

namespace {

// A copy of the built test plugin `name`.so in `dir`, mode 0755.
fs::path copyTestPlugin(const fs::path& dir, const std::string& name)
{
    const fs::path file = dir / (name + ".so");
    fs::copy_file(test::testPluginDir() / (name + ".so"), file);
    fs::permissions(file, fs::perms(0755));
    return file;
}

} // namespace

TEST_CASE("the registry always has the built-in copy plugin")
{
    const auto registry = PluginRegistry::load({});
    const pipeline::Plugin* copy = registry->find("copy");
    REQUIRE(copy);
    CHECK(copy->file().empty());
    CHECK(copy->params().empty());
    CHECK(copy->kernelFiles() == std::vector<std::string>{"copy.cl"});
    CHECK(registry->plugins().size() == 1);
    CHECK(registry->problems().empty());
}

TEST_CASE("color loads from the plugin directory with its schema")
{
    const auto registry = PluginRegistry::load({test::pluginDir()});
    CHECK(registry->problems().empty());
    const pipeline::Plugin* color = registry->find("color");
    REQUIRE(color);
    CHECK(color->file() == test::pluginDir() / "framecl-color.so");
    CHECK_FALSE(color->version().empty());
    CHECK(color->kernelFiles() == std::vector<std::string>{"color.cl"});
    REQUIRE(color->params().size() == 4);
    const pipeline::ParamSchema& op = color->params()[0];
    CHECK(op.name == "op");
    CHECK(op.type == FRAMECL_PARAM_TYPE_ENUM);
    CHECK(op.allowed == std::vector<std::string>{"abgr_to_y", "nv12_to_y", "nv12_to_abgr", "abgr_to_nv12"});
    CHECK(color->params()[1].name == "matrix");
    CHECK(color->params()[2].name == "range");
    CHECK(color->params()[3].name == "variant");
    CHECK(op.default_string == "abgr_to_y");
    CHECK_FALSE(op.help.empty());
}

TEST_CASE("a plugin of another ABI version is refused, naming both versions, while the others load")
{
    const auto registry = PluginRegistry::load({test::testPluginDir()});
    CHECK_FALSE(registry->find("wrong_abi"));
    CHECK(test::problemWith(registry->problems(), "wrong_abi.so") ==
          (test::testPluginDir() / "wrong_abi.so").string() +
              ": plugin ABI version 99, this framecld loads 4 to 7");
    CHECK(registry->find("offset"));
    CHECK(registry->find("broken_kernel")); // loads; its kernel fails only when built
}

TEST_CASE("a shared object without the entry symbol is refused, naming the symbol")
{
    const auto registry = PluginRegistry::load({test::testPluginDir()});
    CHECK_FALSE(registry->find("no_entry"));
    CHECK(test::problemWith(registry->problems(), "no_entry.so") ==
          (test::testPluginDir() / "no_entry.so").string() +
              ": no symbol framecl_plugin_descriptor (is it exported with C linkage?)");
    CHECK(registry->problems().size() == 2); // wrong_abi and no_entry, nothing else
}

TEST_CASE("a plugin file writable by all users is refused, naming its mode")
{
    test::TempDir dir;
    const fs::path file = copyTestPlugin(dir.path(), "offset");
    fs::permissions(file, fs::perms::others_write, fs::perm_options::add);

    const auto registry = PluginRegistry::load({dir.path()});
    CHECK_FALSE(registry->find("offset"));
    REQUIRE(registry->problems().size() == 1);
    CHECK(registry->problems()[0] ==
          file.string() + ": the file is writable by all users (mode 0757)");
}

TEST_CASE("a plugin in a directory writable by all users is refused, naming the directory")
{
    test::TempDir dir;
    const fs::path file = copyTestPlugin(dir.path(), "offset");
    fs::permissions(dir.path(), fs::perms(0777));

    const auto registry = PluginRegistry::load({dir.path()});
    CHECK_FALSE(registry->find("offset"));
    REQUIRE(registry->problems().size() == 1);
    CHECK(registry->problems()[0] == file.string() + ": its directory " + dir.path().string() +
                                         " is writable by all users (mode 0777)");
}

TEST_CASE("a plugin whose name is already loaded is refused, naming the first")
{
    test::TempDir first, second;
    const fs::path kept = copyTestPlugin(first.path(), "offset");
    const fs::path refused = copyTestPlugin(second.path(), "offset");

    const auto registry = PluginRegistry::load({first.path(), second.path()});
    REQUIRE(registry->find("offset"));
    CHECK(registry->find("offset")->file() == kept);
    REQUIRE(registry->problems().size() == 1);
    CHECK(registry->problems()[0] ==
          refused.string() + ": plugin 'offset' is already loaded (" + kept.string() + ")");
}

TEST_CASE("a missing plugin directory is a problem, and the other directories still load")
{
    test::TempDir dir;
    const auto registry = PluginRegistry::load({dir / "missing", test::pluginDir()});
    CHECK(registry->find("color"));
    REQUIRE(registry->problems().size() == 1);
    CHECK(registry->problems()[0].starts_with("plugin directory " + (dir / "missing").string() +
                                              ": "));
}

TEST_CASE("plugins are listed copy first, then by directory and file name")
{
    const auto names = [](const std::vector<fs::path>& dirs) {
        std::vector<std::string> loaded;
        const auto registry = PluginRegistry::load(dirs); // outlives the loop: it owns the plugins
        for (const pipeline::Plugin* plugin : registry->plugins())
            loaded.push_back(plugin->name());
        return loaded;
    };
    CHECK(names({test::testPluginDir()}) == std::vector<std::string>{"copy", "broken_kernel", "image_planes", "offset"});
    // The build's plugins (whichever exist) before the second directory's.
    const auto both = names({test::pluginDir(), test::testPluginDir()});
    const auto at = [&](const std::string& name) { return std::find(both.begin(), both.end(), name) - both.begin(); };
    CHECK(at("copy") == 0);
    CHECK(at("color") < at("broken_kernel"));
    CHECK(at("broken_kernel") < at("offset"));
}

TEST_CASE("a plugin file replaced on disk is loaded anew, while the registry loaded before keeps "
          "the old one")
{
    test::TempDir dir;
    const fs::path file = copyTestPlugin(dir.path(), "offset");
    const auto before = PluginRegistry::load({dir.path()});

    // As a package upgrade does it: a new file renamed over the old one.
    fs::copy_file(test::testPluginDir() / "broken_kernel.so", dir / "new.tmp");
    fs::permissions(dir / "new.tmp", fs::perms(0755));
    fs::rename(dir / "new.tmp", file);
    const auto after = PluginRegistry::load({dir.path()});

    CHECK(after->find("broken_kernel"));
    CHECK_FALSE(after->find("offset"));
    const pipeline::Plugin* old = before->find("offset");
    REQUIRE(old);
    auto params = pipeline::resolveParams(*old, {});
    REQUIRE(params);
    CHECK(old->plan({DRM_FORMAT_R8, 8, 8}, *params)); // its code is still mapped
}
