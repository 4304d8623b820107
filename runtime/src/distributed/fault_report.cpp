#include <glmrt/distributed/fault_report.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>

#include <unistd.h>

namespace glmrt {
namespace {

// A signal handler can reach nothing but process-wide state: the message is
// written in full before `ready` says it may be printed.
char g_message[1024];
std::atomic<size_t> g_message_length{0};
std::atomic<bool> g_terminate_requested{false};

void on_terminate(int) {
  const size_t n = g_message_length.load();
  if (n > 0) {
    ssize_t ignored = ::write(STDERR_FILENO, g_message, n);
    (void)ignored;
    ::_exit(1);
  }
  g_terminate_requested.store(true);
}

}  // namespace

void FaultReport::install() {
  struct sigaction action {};
  action.sa_handler = on_terminate;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
}

bool FaultReport::terminate_requested() {
  return g_terminate_requested.load();
}

FaultReport::Waiting::Waiting(const std::vector<int>& ranks, const std::vector<std::string>& hosts,
                              const std::string& what)
    : ranks_(ranks), hosts_(hosts), what_(what) {
  publish();
}

FaultReport::Waiting::~Waiting() {
  g_message_length.store(0);
}

void FaultReport::Waiting::answered(int rank) {
  ranks_.erase(std::remove(ranks_.begin(), ranks_.end(), rank), ranks_.end());
  publish();
}

void FaultReport::Waiting::publish() const {
  g_message_length.store(0);
  if (ranks_.empty()) return;
  std::string names;
  for (int r : ranks_) {
    const size_t at = static_cast<size_t>(r);
    const bool known = at < hosts_.size() && !hosts_[at].empty();
    names += fmt::format("{}rank {}{}", names.empty() ? "" : ", ", r,
                         known ? fmt::format(" (host {})", hosts_[at]) : std::string());
  }
  const std::string text = fmt::format(
      "glmrt: error: the job was ended (SIGTERM: mpirun ends every rank when one dies) while rank "
      "0 waited for {} for {}: that rank stopped; the run is incomplete\n",
      names, what_);
  const size_t n = std::min(text.size(), sizeof(g_message));
  std::memcpy(g_message, text.data(), n);
  g_message_length.store(n);
}

}  // namespace glmrt
