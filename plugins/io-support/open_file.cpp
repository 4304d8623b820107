#include "open_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <utility>

namespace glmrt::io_support {

OpenFile::OpenFile(OpenFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

glmrt_status open_read_only(std::string_view plugin, const char* const* paths, int32_t n_paths,
                            std::vector<OpenFile>& files, std::string& error) {
  std::vector<OpenFile> opened;
  opened.reserve(static_cast<size_t>(n_paths));
  for (int32_t i = 0; i < n_paths; ++i) {
    const std::string path = paths[i] ? paths[i] : "";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error = std::string(plugin) + ": cannot open " + path + ": " + std::strerror(errno);
      return GLMRT_ERR_IO;
    }
    opened.emplace_back(path, fd);
  }
  files = std::move(opened);
  return GLMRT_OK;
}

}  // namespace glmrt::io_support
