#include <glmrt/base/error.h>
#include <glmrt/serve/shutdown_signals.h>

#include <pthread.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace glmrt::serve {

ShutdownSignals::ShutdownSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  if (const int error = pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_); error != 0)
    fail("cannot block SIGTERM/SIGINT: {}", std::strerror(error));
  watcher_ = std::thread([this] { watch(); });
}

ShutdownSignals::~ShutdownSignals() {
  stop_watching();
  // A second SIGTERM sent while the server was stopping is still pending:
  // taken here, or unblocking it would kill the process with its exit code.
  const timespec now{0, 0};
  while (sigtimedwait(&signals_, nullptr, &now) > 0) {
  }
  // Once a signal has stopped the server the process is on its way out: the
  // signals stay blocked, so one repeated while it finishes (a supervisor
  // sending SIGTERM again, a slow teardown under a sanitizer) stays pending
  // and dies with the process instead of turning a clean exit into a death
  // by signal.
  if (!received_.load()) pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void ShutdownSignals::stop_watching() {
  stopping_.store(true);
  if (watcher_.joinable()) watcher_.join();
}

void ShutdownSignals::on_signal(std::function<void()> action) {
  std::unique_lock lock(mutex_);
  if (received_.load()) {
    lock.unlock();
    action();
    return;
  }
  action_ = std::move(action);
}

void ShutdownSignals::watch() {
  // Wakes every 100 ms to notice the destructor; a signal is taken at once.
  const timespec tick{0, 100'000'000};
  while (!stopping_.load()) {
    const int signal = sigtimedwait(&signals_, nullptr, &tick);
    if (signal < 0) continue;  // EAGAIN (tick) or EINTR
    std::function<void()> action;
    {
      std::lock_guard lock(mutex_);
      if (received_.exchange(true)) continue;  // a second signal changes nothing
      action = std::move(action_);
    }
    if (action) action();
  }
}

}  // namespace glmrt::serve
