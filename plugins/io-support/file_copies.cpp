#include "file_copies.h"

#include <errno.h>
#include <unistd.h>

#include <sys/stat.h>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>

namespace glmrt::io_support {
namespace {

namespace fs = std::filesystem;

/// A header this long is not a safetensors header (the real ones are a few
/// MB at GLM-5 size); past it only the first kPlainHeaderBytes are compared.
constexpr uint64_t kMaxSafetensorsHeader = 256ull << 20;
constexpr uint64_t kPlainHeaderBytes = 64 << 10;

fs::path normal_folder(const fs::path& path) {
  std::error_code ec;
  fs::path absolute = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path).lexically_normal() : absolute;
}

/// The deepest folder holding every path, or empty when there is none.
fs::path deepest_common_folder(const std::vector<std::string>& paths) {
  fs::path common;
  for (size_t i = 0; i < paths.size(); ++i) {
    const fs::path folder = normal_folder(paths[i]).parent_path();
    if (i == 0) {
      common = folder;
      continue;
    }
    fs::path shared;
    auto a = common.begin(), b = folder.begin();
    for (; a != common.end() && b != folder.end() && *a == *b; ++a, ++b) shared /= *a;
    common = shared;
  }
  return common;
}

bool read_exactly(int fd, uint64_t offset, uint64_t length, std::vector<char>& out) {
  out.resize(length);
  uint64_t done = 0;
  while (done < length) {
    const ssize_t got =
        ::pread(fd, out.data() + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<uint64_t>(got);
  }
  return true;
}

/// How many leading bytes identify the file: a safetensors file's 8-byte
/// length and its JSON header, else the first 64 KiB (or the whole file).
uint64_t identifying_bytes(int fd, uint64_t size) {
  std::vector<char> prefix;
  if (size >= 8 && read_exactly(fd, 0, 8, prefix)) {
    uint64_t header = 0;
    for (int i = 7; i >= 0; --i) header = (header << 8) | static_cast<unsigned char>(prefix[i]);
    if (header <= kMaxSafetensorsHeader && header <= size - 8) return 8 + header;
  }
  return std::min(size, kPlainHeaderBytes);
}

}  // namespace

bool lay_out_copies(std::string_view plugin, const std::vector<std::string>& paths,
                    const std::vector<MirrorEntry>& mirrors, CopyLayout& layout,
                    std::string& error) {
  layout = {};
  const fs::path own = deepest_common_folder(paths);
  if (!mirrors.empty() && (paths.empty() || own.empty() || own == own.root_path())) {
    error = std::string(plugin) +
            ": `mirrors` needs the model's files in one folder (the folder a mirror copies)";
    return false;
  }
  layout.folders.push_back(own.string());
  layout.paths.push_back(paths);
  layout.caps.push_back(0);
  bool own_listed = false;
  for (const MirrorEntry& mirror : mirrors) {
    const fs::path folder = normal_folder(mirror.folder);
    const auto known = std::find(layout.folders.begin(), layout.folders.end(), folder.string());
    if (known == layout.folders.begin() && !own_listed) {
      own_listed = true;
      layout.caps[0] = mirror.max_bytes_per_second;  // the model's own folder: its cap
      continue;
    }
    if (known != layout.folders.end()) {
      error = std::string(plugin) + ": `mirrors` lists " + mirror.folder + " twice" +
              (known == layout.folders.begin() ? " (it is the model's own folder)" : "");
      return false;
    }
    std::vector<std::string> copy;
    for (const std::string& path : paths)
      copy.push_back((folder / normal_folder(path).lexically_relative(own)).string());
    layout.folders.push_back(folder.string());
    layout.paths.push_back(std::move(copy));
    layout.caps.push_back(mirror.max_bytes_per_second);
  }
  return true;
}

std::string check_same_file(std::string_view plugin, const std::string& original_path,
                            int original_fd, const std::string& copy_path, int copy_fd) {
  struct stat a {
  }, b{};
  if (::fstat(original_fd, &a) != 0 || ::fstat(copy_fd, &b) != 0)
    return std::string(plugin) + ": cannot stat " + copy_path + ": " + std::strerror(errno);
  const std::string prefix = std::string(plugin) + ": mirror file " + copy_path +
                             " is not a copy of " + original_path + ": ";
  if (a.st_size != b.st_size)
    return prefix + "it holds " + std::to_string(b.st_size) + " bytes, the original " +
           std::to_string(a.st_size);
  const uint64_t size = static_cast<uint64_t>(a.st_size);
  const uint64_t compared = identifying_bytes(original_fd, size);
  std::vector<char> x, y;
  if (!read_exactly(original_fd, 0, compared, x))
    return std::string(plugin) + ": cannot read the header of " + original_path;
  if (!read_exactly(copy_fd, 0, compared, y))
    return std::string(plugin) + ": cannot read the header of " + copy_path;
  if (x != y) {
    const auto at = std::mismatch(x.begin(), x.end(), y.begin()).first - x.begin();
    return prefix + "their headers differ at byte " + std::to_string(at);
  }
  return {};
}

CopyRouter::CopyRouter(const std::vector<uint64_t>& caps, ByteRateLimit::Clock::duration cap_credit)
    : copies_(caps.size()) {
  for (size_t c = 0; c < caps.size(); ++c)
    if (caps[c]) copies_[c].cap = std::make_unique<ByteRateLimit>(caps[c], cap_credit);
}

size_t CopyRouter::least_busy_locked() const {
  size_t best = 0;
  // Ties (idle copies) go to the one that has read least, so copies that
  // answer faster than reads arrive still share the work.
  for (size_t c = 1; c < copies_.size(); ++c)
    if (std::pair(copies_[c].in_flight, copies_[c].read) <
        std::pair(copies_[best].in_flight, copies_[best].read))
      best = c;
  return best;
}

size_t CopyRouter::least_busy() const {
  std::lock_guard lock(mutex_);
  return least_busy_locked();
}

CopyRouter::Lease CopyRouter::begin(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  const size_t best = least_busy_locked();
  Copy& copy = copies_[best];
  copy.in_flight += bytes;
  return Lease(*this, best, bytes,
               copy.cap ? copy.cap->reserve(bytes) : ByteRateLimit::Clock::time_point{});
}

void CopyRouter::end(const Lease& lease) noexcept {
  if (copies_[lease.copy_].cap) ByteRateLimit::wait_until(lease.due_);
  std::lock_guard lock(mutex_);
  Copy& copy = copies_[lease.copy_];
  copy.in_flight -= lease.bytes_;
  copy.read += lease.bytes_;
}

uint64_t CopyRouter::bytes_read(size_t copy) const {
  std::lock_guard lock(mutex_);
  return copies_.at(copy).read;
}

}  // namespace glmrt::io_support
