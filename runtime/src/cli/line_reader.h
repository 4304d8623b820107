// Lines from a file descriptor (the chat's stdin), read with read(2) so that
// a Ctrl-C at the prompt interrupts the wait instead of being retried
// silently as std::getline would.
#pragma once

#include <atomic>
#include <string>

namespace glmrt::cli {

enum class LineStatus { line, end_of_input, interrupted };

class LineReader {
 public:
  /// `interrupted` is the SIGINT flag (see SigintScope); it must outlive the reader.
  LineReader(int fd, const std::atomic<bool>& interrupted);

  /// The next line without its "\n" (or "\r\n"); a last line without a
  /// newline counts. `interrupted` when the flag is set while waiting.
  LineStatus read(std::string& line);

 private:
  bool take_line(std::string& line);

  int fd_;
  const std::atomic<bool>& interrupted_;
  std::string buffer_;
  bool at_end_ = false;
};

}  // namespace glmrt::cli
