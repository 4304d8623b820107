// A progress bar for long transfers (loading a model, writing one): bytes
// done, rate and time left, redrawn in place on stderr when stderr is a
// terminal. In a log (stderr redirected) it prints nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace glmrt {

class ProgressBar {
 public:
  /// `what` leads the line ("loading", "writing"); `total_bytes` is 100%.
  ProgressBar(std::string what, uint64_t total_bytes);
  /// Leaves the line as it was last drawn and ends it.
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// Records `done_bytes`; redraws at most every 100 ms. Safe from any thread
  /// (a call that finds another one drawing returns at once).
  void update(uint64_t done_bytes);
  /// Draws 100% with the total time and ends the line.
  void finish();

  bool visible() const { return visible_; }

 private:
  void draw(uint64_t done_bytes, bool final);

  std::string what_;
  uint64_t total_;
  bool visible_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::mutex mutex_;
};

/// One line of the bar: "what [#####.....]  45%  1.31/2.90 GB  1.05 GB/s  ETA 2s"
/// (ETA replaced by the elapsed time when final). Exposed for tests.
std::string format_progress(const std::string& what, uint64_t done, uint64_t total, double seconds,
                            bool final);

}  // namespace glmrt
