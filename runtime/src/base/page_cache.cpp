#include <glmrt/base/page_cache.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace glmrt {

std::string evict_from_page_cache(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return file.string() + ": " + std::strerror(errno);
  const int error = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return error ? file.string() + ": posix_fadvise: " + std::strerror(error) : std::string();
}

int64_t page_cache_resident_bytes(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat info {};
  if (::fstat(fd, &info) != 0 || info.st_size == 0) {
    ::close(fd);
    return info.st_size == 0 ? 0 : -1;
  }
  const size_t size = static_cast<size_t>(info.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return -1;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((size + page - 1) / page);
  int64_t bytes = -1;
  if (::mincore(map, size, resident.data()) == 0) {
    bytes = 0;
    for (unsigned char r : resident) bytes += (r & 1) ? static_cast<int64_t>(page) : 0;
  }
  ::munmap(map, size);
  return bytes;
}

}  // namespace glmrt
