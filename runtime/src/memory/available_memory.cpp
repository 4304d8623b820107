#include <glmrt/memory/available_memory.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace glmrt {
namespace {

std::optional<uint64_t> read_number(const std::filesystem::path& file) {
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
  const auto limit = read_number(limit_file);
  if (!limit || *limit >= unlimited_at) return;
  const uint64_t usage = read_number(usage_file).value_or(0);
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
  std::ifstream in(files.self_cgroup);
  std::string line;
  while (std::getline(in, line)) {
    // "ID:CONTROLLERS:PATH"; v2 is "0::PATH", v1's memory line names `memory`.
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::filesystem::path path = line.substr(b + 1);
    const std::filesystem::path relative = path.relative_path();
    if (controllers.empty()) {
      // v2: every level from the process's group up to the mount's root.
      for (std::filesystem::path p = relative;; p = p.parent_path()) {
        const auto dir = files.cgroup_mount / p;
        consider_cgroup(best, dir / "memory.max", dir / "memory.current", UINT64_MAX);
        if (p.empty()) break;
      }
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      // v1: the group's folder when this mount namespace shows it, else the
      // mount's root (a container sees its own group there).
      const auto root = files.cgroup_mount / "memory";
      for (const auto& dir : {root / relative, root}) {
        consider_cgroup(best, dir / "memory.limit_in_bytes", dir / "memory.usage_in_bytes",
                        kV1Unlimited);
      }
    }
  }
  if (best) {
    result.cgroup_room = best->bytes;
    result.cgroup_source = best->source;
  }
  return result;
}

}  // namespace glmrt
