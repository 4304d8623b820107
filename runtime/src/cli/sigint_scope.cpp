#include "sigint_scope.h"

#include <glmrt/base/error.h>

#include <cerrno>
#include <cstring>

namespace glmrt::cli {
namespace {

static_assert(std::atomic<bool>::is_always_lock_free, "the handler needs a lock-free flag");
static_assert(std::atomic<std::atomic<bool>*>::is_always_lock_free,
              "the handler needs a lock-free pointer");

// The only way into a signal handler; see sigint_scope.h.
std::atomic<std::atomic<bool>*> g_sigint_flag{nullptr};

extern "C" void on_sigint(int) {
  if (std::atomic<bool>* flag = g_sigint_flag.load()) flag->store(true);
}

}  // namespace

SigintScope::SigintScope(std::atomic<bool>& flag) {
  std::atomic<bool>* expected = nullptr;
  if (!g_sigint_flag.compare_exchange_strong(expected, &flag))
    fail("SIGINT handler: another scope is already installed");
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: interrupt blocking reads
  if (sigaction(SIGINT, &action, &previous_) != 0) {
    g_sigint_flag.store(nullptr);
    fail("SIGINT handler: sigaction failed ({})", std::strerror(errno));
  }
}

SigintScope::~SigintScope() {
  sigaction(SIGINT, &previous_, nullptr);
  g_sigint_flag.store(nullptr);
}

}  // namespace glmrt::cli
