#include <glmrt/base/page_cache.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace glmrt {

std::string evict_from_page_cache(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return file.string() + ": " + std::strerror(errno);
  const int error = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return error ? file.string() + ": posix_fadvise: " + std::strerror(error) : std::string();
}

}  // namespace glmrt
