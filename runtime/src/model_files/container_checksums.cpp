#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_files/container_checksums.h>

#include <fcntl.h>
#include <glmrt/model_files/file_io.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

namespace glmrt {

namespace {

// Reads large enough that a drive streams them at its sequential speed.
constexpr size_t kHashBlockBytes = size_t{8} << 20;

}  // namespace

uint64_t hash_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open {}: {}", path, std::strerror(errno));
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::vector<std::byte> buffer(kHashBlockBytes);
  std::string error;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = std::strerror(errno);
    if (n <= 0) break;
    XXH3_64bits_update(state, buffer.data(), static_cast<size_t>(n));
  }
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (!error.empty()) fail("reading {} failed: {}", path, error);
  return hash;
}

std::string hash_hex(uint64_t hash) {
  return fmt::format("{:016x}", hash);
}

namespace fs = std::filesystem;

std::vector<ChecksumEntry> read_container_checksums(const fs::path& dir) {
  const fs::path list = dir / kChecksumsFile;
  std::error_code ec;
  if (!fs::exists(list, ec))
    fail("{} is missing: {} is not a container written by glmrt convert (or not a finished one)",
         list, dir);
  nlohmann::json checksums;
  try {
    checksums = nlohmann::json::parse(
        read_input_file(list, InputKind{"the checksum list", 64 * kInputMiB}));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", list, e.what());
  }
  const auto form = [&] {
    fail("{}: expected {{\"hash\": \"xxh3-64\", \"files\": {{name: {{bytes, xxh3}}}}}}", list);
  };
  if (!checksums.is_object() || !checksums.contains("files") || !checksums["files"].is_object() ||
      !checksums.contains("hash") || checksums["hash"] != "xxh3-64")
    form();
  std::vector<ChecksumEntry> entries;
  for (const auto& [name, entry] : checksums["files"].items()) {
    if (!entry.is_object() || !entry.contains("bytes") || !entry["bytes"].is_number_unsigned() ||
        !entry.contains("xxh3") || !entry["xxh3"].is_string())
      form();
    // A name is a file of the folder, never a path leading out of it.
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      fail("{}: `{}` is not the name of a file in the container", list, printable(name));
    entries.push_back({name, entry["bytes"].get<uint64_t>(), entry["xxh3"].get<std::string>()});
  }
  return entries;
}

void require_listed_size(const fs::path& dir, const ChecksumEntry& entry) {
  const fs::path file = dir / entry.name;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) fail("{} is missing (listed in {})", file, kChecksumsFile);
  const uint64_t size = fs::file_size(file, ec);
  if (size != entry.bytes)
    fail("{} holds {} bytes, {} lists {}: the file is {}", file, size, dir / kChecksumsFile,
         entry.bytes, size < entry.bytes ? "truncated" : "longer than written");
}

void require_listed_hash(const fs::path& dir, const ChecksumEntry& entry, uint64_t found) {
  if (hash_hex(found) != entry.xxh3)
    fail("{}: checksum {} differs from {} in {}: the file is damaged", dir / entry.name,
         hash_hex(found), printable(entry.xxh3), dir / kChecksumsFile);
}

void require_every_file_listed(const fs::path& dir, const std::vector<ChecksumEntry>& entries,
                               const TensorDirectory& tensors) {
  for (const auto& f : tensors.files()) {
    const std::string name = f.filename().string();
    if (std::none_of(entries.begin(), entries.end(),
                     [&](const ChecksumEntry& e) { return e.name == name; }))
      fail("{} holds tensors but has no checksum in {}", f, dir / kChecksumsFile);
  }
}

ChecksumReport check_container_checksums(const fs::path& dir) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ChecksumEntry> entries = read_container_checksums(dir);
  ChecksumReport r;
  for (const ChecksumEntry& e : entries) {
    require_listed_size(dir, e);
    require_listed_hash(dir, e, hash_file(dir / e.name));
    ++r.files;
    r.bytes += e.bytes;
  }
  require_every_file_listed(dir, entries, TensorDirectory::open(dir));
  r.seconds = seconds_since(start);
  return r;
}

}  // namespace glmrt
