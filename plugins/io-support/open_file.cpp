#include "open_file.h"

#include <unistd.h>

#include <utility>

namespace glmrt::io_support {

OpenFile::OpenFile(OpenFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace glmrt::io_support
