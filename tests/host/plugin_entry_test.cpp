// Every in-tree plugin's entry point, called as a host would call it: the
// descriptor is of this ABI, and create() refuses what it cannot serve (no
// host, another ABI, services too old for its kind, an unknown setting) with
// a message naming the plugin, never a crash or an exception.
#include <glmrt/host/plugin_host.h>
#include <glmrt/plugin/plugin.h>

#include <dlfcn.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

/// Every plugin the build makes (GLMRT_IN_TREE_PLUGINS: their files, `:` between).
std::vector<fs::path> in_tree_plugins() {
  std::vector<fs::path> found;
  const std::string list = GLMRT_IN_TREE_PLUGINS;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(':', start), list.size());
    if (end > start) found.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return found;
}

/// The oldest host services minor a plugin of `kind` calls.
int needed_minor(uint32_t kind) {
  if (kind == GLMRT_PLUGIN_IO) return GLMRT_ABI_MINOR_ASYNC_IO;
  if (kind == GLMRT_PLUGIN_DRAFT) return GLMRT_ABI_MINOR_DRAFT;
  return 0;
}

class Library {
 public:
  explicit Library(const fs::path& file) : handle_(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle_) dlclose(handle_);
  }
  const glmrt_plugin_descriptor* descriptor() const {
    auto describe = reinterpret_cast<glmrt_describe_fn>(dlsym(handle_, GLMRT_PLUGIN_ENTRY_SYMBOL));
    return describe ? describe() : nullptr;
  }

 private:
  void* handle_;
};

/// create()'s error text, or "" when it made an object (destroyed here).
std::string create_error(const glmrt_plugin_descriptor& d, const glmrt_host_services* host,
                         const std::vector<glmrt_setting>& settings = {}) {
  char error[512] = "untouched";
  void* object = d.create(host, settings.data(), settings.size(), error, sizeof(error));
  if (!object) return error;
  switch (d.kind) {
    case GLMRT_PLUGIN_KERNELS:
      static_cast<plugin::Kernels*>(object)->destroy();
      break;
    case GLMRT_PLUGIN_IO:
      static_cast<plugin::Io*>(object)->destroy();
      break;
    default:
      static_cast<plugin::Draft*>(object)->destroy();
  }
  return "";
}

TEST(InTreePlugins, EntryPointsRefuseWhatTheyCannotServeNamingThemselves) {
  MemoryBudget budget;
  HostServices services(budget, 2);
  const glmrt_host_services current = *services.get();
  const std::vector<fs::path> plugins = in_tree_plugins();
  ASSERT_GE(plugins.size(), 5u) << GLMRT_IN_TREE_PLUGINS;
  for (const fs::path& file : plugins) {
    SCOPED_TRACE(file.string());
    Library library(file);
    const glmrt_plugin_descriptor* d = library.descriptor();
    ASSERT_NE(d, nullptr) << dlerror();
    EXPECT_EQ(d->struct_size, sizeof(glmrt_plugin_descriptor));
    EXPECT_EQ(d->abi_major, GLMRT_ABI_MAJOR);
    EXPECT_EQ(d->abi_minor, GLMRT_ABI_MINOR);
    EXPECT_EQ(file.filename().string(), "libglmrt-" + std::string(d->name) + ".so");
    const std::string name = d->name;

    glmrt_probe_result probe{sizeof(glmrt_probe_result), 0, 0, {}};
    d->probe(&probe);
    if (!probe.supported) continue;  // create() may refuse this CPU first
    EXPECT_EQ(create_error(*d, &current), "") << "the current host serves every plugin";

    EXPECT_THAT(create_error(*d, nullptr), HasSubstr(name + " needs host services"));
    glmrt_host_services other_major = current;
    other_major.abi_major = GLMRT_ABI_MAJOR + 1;
    EXPECT_THAT(create_error(*d, &other_major), HasSubstr(name + " needs host services"));
    glmrt_host_services no_memory = current;
    no_memory.alloc = nullptr;
    EXPECT_THAT(create_error(*d, &no_memory), HasSubstr("services missing"));
    const int needed = needed_minor(d->kind);
    if (needed > 0) {
      glmrt_host_services older = current;
      older.abi_minor = static_cast<uint16_t>(needed - 1);
      EXPECT_THAT(create_error(*d, &older),
                  HasSubstr(name + " needs host services of ABI 1." + std::to_string(needed)));
    }
    EXPECT_THAT(create_error(*d, &current, {{"no_such_key", "1"}}),
                HasSubstr("unknown setting `no_such_key`"));
  }
}

}  // namespace
}  // namespace glmrt
