#include <glmrt/distributed/mpi_world.h>

#include <charconv>
#include <cstdlib>
#include <string_view>
#include <thread>

namespace glmrt {

bool launched_as_several_ranks() {
  // OpenMPI's launcher, then MPICH's (hydra) and other PMI launchers.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* value = std::getenv(name);
    if (!value) continue;
    const std::string_view text(value);
    int size = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), size);
    if (error == std::errc() && end == text.data() + text.size()) return size > 1;
  }
  return false;
}

void PollBackoff::wait() {
  // ~200 quick checks (a message usually lands within microseconds while
  // the other rank is busy), then sleeps growing to 200 us (the latency a waiting rank adds).
  constexpr int kQuickChecks = 200;
  if (spins_ < kQuickChecks) {
    ++spins_;
    std::this_thread::yield();
    return;
  }
  const int sleeps = spins_++ - kQuickChecks;
  std::this_thread::sleep_for(std::chrono::microseconds(std::min(20 + 20 * sleeps, 200)));
}

}  // namespace glmrt
