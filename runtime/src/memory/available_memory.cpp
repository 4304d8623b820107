#include <glmrt/base/cgroup_files.h>
#include <glmrt/memory/available_memory.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace glmrt {
namespace {

uint64_t read_mem_available(const std::filesystem::path& meminfo) {
  std::ifstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kib) == 1) return kib * 1024;
  }
  return 0;
}

/// cgroup v1 limits at or above this are "no limit" (the kernel's
/// PAGE_COUNTER_MAX rounded to pages).
constexpr uint64_t kV1Unlimited = uint64_t{1} << 62;

struct Room {
  uint64_t bytes;
  std::string source;
};

void consider_cgroup(std::optional<Room>& best, const std::filesystem::path& limit_file,
                     const std::filesystem::path& usage_file, uint64_t unlimited_at) {
  const auto limit = read_cgroup_number(limit_file);
  if (!limit || *limit >= unlimited_at) return;
  const uint64_t usage = read_cgroup_number(usage_file).value_or(0);
  const uint64_t room = *limit > usage ? *limit - usage : 0;
  if (!best || room < best->bytes)
    best = Room{room, fmt::format("{} ({} limit, {} in use)", limit_file.string(), *limit, usage)};
}

}  // namespace

uint64_t AvailableMemory::usable() const {
  if (cgroup_room && mem_available) return std::min(*cgroup_room, mem_available);
  return cgroup_room ? *cgroup_room : mem_available;
}

AvailableMemory measure_available_memory(const SystemFiles& files) {
  AvailableMemory result;
  result.mem_available = read_mem_available(files.meminfo);
  std::optional<Room> best;
  for (const CgroupFolder& folder :
       cgroup_folders(files.self_cgroup, files.cgroup_mount, "memory")) {
    if (folder.unified)
      consider_cgroup(best, folder.dir / "memory.max", folder.dir / "memory.current", UINT64_MAX);
    else
      consider_cgroup(best, folder.dir / "memory.limit_in_bytes",
                      folder.dir / "memory.usage_in_bytes", kV1Unlimited);
  }
  if (best) {
    result.cgroup_room = best->bytes;
    result.cgroup_source = best->source;
  }
  return result;
}

}  // namespace glmrt
