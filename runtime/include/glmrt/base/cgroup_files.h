// The cgroup folders that may limit this process, for the limits glmrt reads
// itself (memory for `budget: auto`, pids for serve's thread ceiling).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace glmrt {

/// The whole number a cgroup file holds alone; nullopt for "max", a missing
/// or unreadable file, or anything else.
std::optional<uint64_t> read_cgroup_number(const std::filesystem::path& file);

struct CgroupFolder {
  std::filesystem::path dir;
  bool unified = false;  // cgroup v2 (its files are named differently from v1's)
};

/// The folders whose limits on `controller` ("memory", "pids") hold for the
/// process that `self_cgroup` (/proc/self/cgroup) describes, under
/// `cgroup_mount`: for v2 every level from its group up to the mount's root;
/// for v1 the controller's group folder, then the controller mount's root
/// (a container sees its own group there).
std::vector<CgroupFolder> cgroup_folders(const std::filesystem::path& self_cgroup,
                                         const std::filesystem::path& cgroup_mount,
                                         std::string_view controller);

}  // namespace glmrt
