// SIGTERM and SIGINT as a request to shut down cleanly. The signals are
// blocked in the thread that creates this object — and so in every thread it
// starts afterwards (the HTTP pool, the model thread, OpenMP's workers) — and
// one watcher thread takes them with sigtimedwait. No handler runs in signal
// context and no global state is needed.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

namespace glmrt::serve {

class ShutdownSignals {
 public:
  /// Create before any other thread, so that all of them inherit the mask.
  ShutdownSignals();
  ~ShutdownSignals();
  ShutdownSignals(const ShutdownSignals&) = delete;
  ShutdownSignals& operator=(const ShutdownSignals&) = delete;

  /// `action` runs once, on the watcher thread, when a signal arrives (at
  /// once when one already did).
  void on_signal(std::function<void()> action);
  bool received() const { return received_.load(); }
  /// Stops watching, after an action in progress has returned (call it before
  /// what the action uses goes away). Later signals stay blocked until the
  /// object is destroyed, then take their default effect.
  void stop_watching();

 private:
  void watch();

  sigset_t signals_{};
  sigset_t previous_mask_{};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> received_{false};
  std::mutex mutex_;
  std::function<void()> action_;
  std::thread watcher_;
};

}  // namespace glmrt::serve
