#include "plugin_checks.h"

#include <glmrt/base/error.h>

#include <cstdlib>
#include <string>

namespace glmrt::conformance {

void check_rejects_unknown_setting(CheckReport& report, const std::filesystem::path& plugin_file,
                                   const std::function<void(const PluginChoice&)>& create) {
  const std::string name = "rejects unknown settings";
  PluginChoice choice{plugin_file.string(), {{kBogusSettingKey, "1"}}, {}};
  try {
    create(choice);
    report.fail(name, std::string("create() accepted `") + kBogusSettingKey + "`");
  } catch (const Error& e) {
    const std::string message = e.what();
    const bool names_key = message.find(kBogusSettingKey) != std::string::npos;
    report.expect(names_key, name,
                  (names_key ? "" : "the error must name the key; got: ") + message);
  }
}

TempFolder::TempFolder() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "glmrt-conformance-XXXXXX").string();
  if (!mkdtemp(pattern.data())) fail("conformance: cannot create a folder like {}", pattern);
  path_ = pattern;
}

TempFolder::~TempFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace glmrt::conformance
