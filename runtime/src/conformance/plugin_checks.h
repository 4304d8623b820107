// Checks every plugin kind shares, and a temporary folder for the io checks.
#pragma once

#include <glmrt/conformance/check_report.h>
#include <glmrt/profile/profile.h>

#include <filesystem>
#include <functional>

namespace glmrt::conformance {

/// The setting key no plugin knows; create() must refuse it, naming it.
inline constexpr const char* kBogusSettingKey = "glmrt_conformance_no_such_setting";

/// Calls `create` with a choice of `plugin_file` carrying the bogus setting and
/// records whether it threw a glmrt::Error naming the key.
void check_rejects_unknown_setting(CheckReport& report, const std::filesystem::path& plugin_file,
                                   const std::function<void(const PluginChoice&)>& create);

/// A fresh folder under the system temp folder, removed with its contents.
class TempFolder {
 public:
  TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace glmrt::conformance
