#include "line_reader.h"

#include <glmrt/base/error.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace glmrt::cli {

LineReader::LineReader(int fd, const std::atomic<bool>& interrupted)
    : fd_(fd), interrupted_(interrupted) {}

bool LineReader::take_line(std::string& line) {
  const size_t end = buffer_.find('\n');
  if (end == std::string::npos) return false;
  line.assign(buffer_, 0, end);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  buffer_.erase(0, end + 1);
  return true;
}

LineStatus LineReader::read(std::string& line) {
  for (;;) {
    if (take_line(line)) return LineStatus::line;
    if (at_end_) {
      if (buffer_.empty()) return LineStatus::end_of_input;
      line = std::move(buffer_);
      buffer_.clear();
      return LineStatus::line;
    }
    if (interrupted_.load()) return LineStatus::interrupted;
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
    } else if (n == 0) {
      at_end_ = true;
    } else if (errno != EINTR) {
      fail("cannot read the input (fd {}): {}", fd_, std::strerror(errno));
    }
  }
}

}  // namespace glmrt::cli
