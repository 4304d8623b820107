#include "output_error.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>

namespace glmrt::cli {
namespace {

// Whether `fd` is a pipe or socket whose reader has closed it: Linux reports
// POLLERR to the writer then. Used when a buffered write failed earlier and
// its errno is gone.
bool reader_closed(int fd) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
    return false;
  pollfd p{fd, POLLOUT, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0;
}

// The errno of a failed write to `out`: the one observed, else what the
// descriptor shows, else a generic I/O error.
int failed_write_errno(std::FILE* out, int observed) {
  if (observed == EPIPE || reader_closed(::fileno(out))) return EPIPE;
  return observed != 0 ? observed : EIO;
}

}  // namespace

OutputError::OutputError(int error_number, std::string_view what_failed)
    : std::runtime_error(
          fmt::format("cannot write {} to stdout: {}", what_failed, std::strerror(error_number))),
      error_number_(error_number) {}

bool OutputError::reader_gone() const {
  return error_number_ == EPIPE;
}

void write_output(std::FILE* out, std::string_view bytes, std::string_view what) {
  errno = 0;
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size())
    throw OutputError(failed_write_errno(out, errno), what);
}

void flush_output(std::FILE* out, std::string_view what) {
  errno = 0;
  std::cout.flush();
  const int cout_errno = errno;
  const bool cout_failed = !std::cout.good();
  errno = 0;
  if (std::fflush(out) != 0) throw OutputError(failed_write_errno(out, errno), what);
  // A write that failed earlier leaves the error flag set even when nothing
  // is left to flush.
  if (std::ferror(out) || cout_failed) throw OutputError(failed_write_errno(out, cout_errno), what);
}

int report_output_error(const OutputError& error) {
  if (error.reader_gone()) return 128 + SIGPIPE;
  const std::string line = fmt::format("glmrt: error: {}\n", error.what());
  std::fwrite(line.data(), 1, line.size(), stderr);
  return 1;
}

}  // namespace glmrt::cli
