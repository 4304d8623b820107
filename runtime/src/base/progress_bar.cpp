#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/progress_bar.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace glmrt {
namespace {

constexpr int kBarWidth = 28;
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

std::string duration_text(double seconds) {
  const auto s = static_cast<long>(std::lround(std::max(seconds, 0.0)));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
}

}  // namespace

std::string format_progress(const std::string& what, uint64_t done, uint64_t total, double seconds,
                            bool final) {
  const double fraction = total ? std::min(1.0, double(done) / double(total)) : 1.0;
  const int filled = static_cast<int>(fraction * kBarWidth);
  const double rate = seconds > 0 ? double(done) / seconds : 0.0;
  std::string tail;
  if (final) {
    tail = fmt::format("in {}", duration_text(seconds));
  } else if (rate > 0 && done < total) {
    tail = fmt::format("ETA {}", duration_text(double(total - done) / rate));
  } else {
    tail = "ETA ?";
  }
  return fmt::format("{} [{}{}] {:3.0f}%  {:.2f}/{:.2f} GB  {:.2f} GB/s  {}", what,
                     std::string(filled, '#'), std::string(kBarWidth - filled, '.'),
                     fraction * 100.0, done / 1e9, total / 1e9, rate / 1e9, tail);
}

ProgressBar::ProgressBar(std::string what, uint64_t total_bytes)
    : what_(std::move(what)),
      total_(total_bytes),
      visible_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - kRedrawInterval) {}

ProgressBar::~ProgressBar() {
  std::lock_guard lock(mutex_);
  if (visible_ && !finished_) std::fputc('\n', stderr);
}

void ProgressBar::update(uint64_t done_bytes) {
  if (!visible_) return;
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  draw(done_bytes, false);
}

void ProgressBar::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (!visible_) return;
  draw(total_, true);
  std::fputc('\n', stderr);
}

void ProgressBar::draw(uint64_t done_bytes, bool final) {
  const double seconds = seconds_since(start_);
  // \r returns to the line's start, \033[K clears what a longer line left.
  std::fprintf(stderr, "\r%s\033[K",
               format_progress(what_, done_bytes, total_, seconds, final).c_str());
  std::fflush(stderr);
}

}  // namespace glmrt
