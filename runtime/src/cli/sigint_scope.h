// Ctrl-C (SIGINT) as a request, not a kill: while a SigintScope lives, SIGINT
// only sets the given flag, and the chat loop decides what it means (stop the
// current answer, or leave when it arrives at the prompt).
//
// A signal handler may touch nothing but lock-free atomics, and it receives no
// user pointer, so the flag is reached through one file-local atomic pointer
// that is set only for the scope's lifetime. The flag itself belongs to the
// command that owns the scope; no other state is global.
#pragma once

#include <atomic>
#include <csignal>

namespace glmrt::cli {

class SigintScope {
 public:
  /// Installs the handler without SA_RESTART, so a blocking read() returns
  /// EINTR and the reader can look at the flag. Only one scope may exist.
  explicit SigintScope(std::atomic<bool>& flag);
  ~SigintScope();
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;

 private:
  struct sigaction previous_ {};
};

}  // namespace glmrt::cli
