#include <fcntl.h>
#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/model_files/container_checksums.h>
#include <glmrt/convert/container_verify.h>
#include <glmrt/convert/loadable_check.h>
#include <glmrt/convert/streamed_file_writer.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/non_finite.h>
#include <glmrt/model_files/safetensors.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include <glmrt/model_files/file_io.h>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

// Bytes read at a time; a multiple of every element size, so the pieces of a
// tensor (cut at its start and every kScanBytes after) hold whole elements.
constexpr uint64_t kScanBytes = 8u << 20;

struct FileScan {
  uint64_t hash = 0;
  std::optional<std::string> non_finite;  // the first such value's message
};

// One read of file `index` of `dir`: its XXH3-64, and each float tensor
// checked for NaN and infinities on the way (the check loading makes).
FileScan scan_file(const TensorDirectory& dir, int index) {
  std::vector<const TensorInfo*> tensors;
  for (const TensorInfo& t : dir.tensors())
    if (t.file_index == index && is_float_dtype(t.dtype) && t.byte_size > 0) tensors.push_back(&t);
  std::sort(tensors.begin(), tensors.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  const fs::path& file = dir.files().at(index);
  const int fd = dir.fd(index);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 &XXH3_freeState);
  XXH3_64bits_reset(state.get());
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (ec) fail("cannot read the size of {}: {}", file, ec.message());
  std::vector<std::byte> buffer(kScanBytes);
  FileScan scan;
  size_t next = 0;  // the first tensor not yet passed
  for (uint64_t at = 0; at < size;) {
    while (next < tensors.size() && tensors[next]->offset + tensors[next]->byte_size <= at) ++next;
    const TensorInfo* inside =
        next < tensors.size() && tensors[next]->offset <= at ? tensors[next] : nullptr;
    // A piece ends at the next tensor boundary, so it lies in one tensor or in none.
    uint64_t end = std::min(size, at + kScanBytes);
    if (inside)
      end = std::min(end, inside->offset + inside->byte_size);
    else if (next < tensors.size())
      end = std::min(end, tensors[next]->offset);
    const std::span<std::byte> piece(buffer.data(), static_cast<size_t>(end - at));
    model_files::pread_exact(fd, at, piece, file, "a container file");
    XXH3_64bits_update(state.get(), piece.data(), piece.size());
    if (inside && !scan.non_finite) {
      try {
        require_finite(dir, *inside, piece, (at - inside->offset) / dtype_size(inside->dtype));
      } catch (const Error& e) {
        scan.non_finite = e.what();  // reported once the checksum says the file is whole
      }
    }
    at = end;
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  scan.hash = XXH3_64bits_digest(state.get());
  return scan;
}

// Runs `check` on the headers; when it fails, a damaged file is the likelier
// cause, and the checksums say which.
template <typename Check>
auto damage_first(const fs::path& dir, const std::vector<ChecksumEntry>& entries, Check check) {
  try {
    return check();
  } catch (const Error&) {
    for (const ChecksumEntry& e : entries) require_listed_hash(dir, e, hash_file(dir / e.name));
    throw;
  }
}

}  // namespace

VerifyResult verify_container(const fs::path& dir) {
  const auto start = std::chrono::steady_clock::now();
  VerifyResult r;
  const std::vector<ChecksumEntry> entries = read_container_checksums(dir);
  for (const ChecksumEntry& e : entries) require_listed_size(dir, e);
  // Headers, offsets against file sizes and format stamps are checked on opening.
  const TensorDirectory tensors =
      damage_first(dir, entries, [&] { return TensorDirectory::open(dir); });
  require_every_file_listed(dir, entries, tensors);
  r.tensors = static_cast<int>(tensors.tensors().size());
  // Before the long read: what loading would refuse from the headers alone.
  damage_first(dir, entries,
               [&] { check_loadable(load_model_config(dir, tensors), tensors, dir); });
  for (const ChecksumEntry& e : entries) {
    const auto& files = tensors.files();
    const auto it = std::find_if(files.begin(), files.end(),
                                 [&](const fs::path& f) { return f.filename() == e.name; });
    if (it == files.end()) {
      require_listed_hash(dir, e, hash_file(dir / e.name));
    } else {
      const FileScan scan = scan_file(tensors, static_cast<int>(it - files.begin()));
      require_listed_hash(dir, e, scan.hash);
      if (scan.non_finite) throw Error(*scan.non_finite);
    }
    ++r.files;
    r.bytes += e.bytes;
  }
  r.seconds = seconds_since(start);
  return r;
}

}  // namespace glmrt
