#include <glmrt/base/cgroup_files.h>

#include <fstream>
#include <string>

namespace glmrt {

std::optional<uint64_t> read_cgroup_number(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    size_t used = 0;
    const uint64_t value = std::stoull(word, &used);
    if (used != word.size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<CgroupFolder> cgroup_folders(const std::filesystem::path& self_cgroup,
                                         const std::filesystem::path& cgroup_mount,
                                         std::string_view controller) {
  std::vector<CgroupFolder> folders;
  std::ifstream in(self_cgroup);
  const std::string wanted = "," + std::string(controller) + ",";
  std::string line;
  while (std::getline(in, line)) {
    // "ID:CONTROLLERS:PATH"; v2 is "0::PATH", v1's line names its controllers.
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::filesystem::path relative =
        std::filesystem::path(line.substr(b + 1)).relative_path();
    if (controllers.empty()) {
      for (std::filesystem::path p = relative;; p = p.parent_path()) {
        folders.push_back({cgroup_mount / p, true});
        if (p.empty()) break;
      }
    } else if (("," + controllers + ",").find(wanted) != std::string::npos) {
      const auto root = cgroup_mount / controller;
      folders.push_back({root / relative, false});
      if (!relative.empty()) folders.push_back({root, false});
    }
  }
  return folders;
}

}  // namespace glmrt
