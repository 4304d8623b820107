// How much memory this process may take now: MemAvailable from
// /proc/meminfo, lowered by the memory limit of its control group (cgroup v2
// memory.max - memory.current up the hierarchy, or cgroup v1
// memory.limit_in_bytes - memory.usage_in_bytes), so `memory.budget: auto`
// inside a container sizes itself to the container, not to the host.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace glmrt {

struct AvailableMemory {
  uint64_t mem_available = 0;           // /proc/meminfo MemAvailable (0 when unreadable)
  std::optional<uint64_t> cgroup_room;  // limit - usage of the tightest limit, when limited
  std::string cgroup_source;            // which file set it, for messages
  /// min(MemAvailable, cgroup room); 0 when neither could be read.
  uint64_t usable() const;
};

/// Where the files are read from: the real system, or a fake tree (tests).
struct SystemFiles {
  std::filesystem::path meminfo = "/proc/meminfo";
  std::filesystem::path self_cgroup = "/proc/self/cgroup";
  std::filesystem::path cgroup_mount = "/sys/fs/cgroup";
};

AvailableMemory measure_available_memory(const SystemFiles& files = {});

/// The share of usable memory `memory.budget: auto` takes (see docs/profiles.md:
/// the rest is left to the page cache the expert reads go through, to the
/// allocator's slack above what the budget counts, and to the rest of the
/// machine).
inline constexpr double kAutoBudgetShare = 0.85;

}  // namespace glmrt
