// Failures to write a command's result to stdout. A full disk or a broken
// device is an error the user must see (message on stderr, nonzero status);
// a reader that went away (`glmrt ... | head`) is how pipelines normally end,
// so it stops the command quietly, as Unix tools do.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace glmrt::cli {

/// Not a glmrt::Error: chat, which survives a failed turn, must stop when its
/// output is gone.
class OutputError : public std::runtime_error {
 public:
  /// `what_failed` says what was being written ("the generated text").
  OutputError(int error_number, std::string_view what_failed);
  int error_number() const { return error_number_; }
  /// The reader of a pipe or socket closed it (EPIPE).
  bool reader_gone() const;

 private:
  int error_number_;
};

/// Writes all of `bytes` to `out`; throws OutputError naming `what` on failure.
void write_output(std::FILE* out, std::string_view bytes, std::string_view what);

/// Flushes `out` (stdout; std::cout first, which writes through it) and
/// throws OutputError when that or any earlier buffered write failed.
void flush_output(std::FILE* out, std::string_view what);

/// What main() does with an OutputError: prints "glmrt: error: ..." (nothing
/// when the reader is gone) and returns the exit status (141, the status of a
/// tool killed by SIGPIPE, when the reader is gone; 1 otherwise).
int report_output_error(const OutputError& error);

}  // namespace glmrt::cli
