#include <glmrt/model_files/safetensors.h>

#include <fmt/ranges.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <optional>
#include <system_error>

#include <glmrt/base/error.h>
#include <glmrt/model_files/file_io.h>
#include "dtype_conversion.h"
#include "finite_values.h"
#include "safetensors_header.h"
#include "safetensors_index.h"

namespace glmrt {

namespace {

using std::filesystem::path;
// Named one by one: a using-directive here would also reach every other
// source of a unity batch (model_files::bf16_to_f32 against glmrt's own).
using model_files::close_fd;
using model_files::convert_to_f32;
using model_files::converts_to_f32;
using model_files::element_coordinates;
using model_files::find_non_finite;
using model_files::NonFiniteValues;
using model_files::open_read_only;
using model_files::parse_safetensors_header;
using model_files::pread_exact;
using model_files::read_safetensors_header;
using model_files::read_shard_index;
using model_files::ShardIndex;

constexpr const char* kIndexFile = "model.safetensors.index.json";
constexpr const char* kSingleFile = "model.safetensors";

// Tensors are read in chunks: conversions go through a bounded staging buffer
// (a multi-GB tensor is never held twice in memory) and every chunk is
// checked for non-finite values while it is in cache.
constexpr size_t kConversionChunkBytes = 1 << 20;
// Elements converted and scanned at a time: 16 KiB of f32.
constexpr size_t kScanBlock = 4096;

bool is_existing_file(const path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

/// Why `p` cannot be read as a file; nullopt when it is a regular file or
/// nothing is there at all. (std::filesystem calls a symbolic link loop
/// "no file", which turned a loop into "holds no model.safetensors".)
std::optional<std::string> unusable_entry(const path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0)
    return S_ISREG(st.st_mode)
               ? std::nullopt
               : std::optional<std::string>(S_ISDIR(st.st_mode) ? "it is a directory"
                                                                : "it is not a regular file");
  const int err = errno;
  struct stat link {};
  if (err == ENOENT && ::lstat(p.c_str(), &link) != 0) return std::nullopt;
  if (err == ENOENT) return "it is a symbolic link to a file that does not exist";
  if (err == ELOOP) return "its symbolic links form a loop";
  return std::string(std::strerror(err));
}

void require_usable(const path& p) {
  if (auto problem = unusable_entry(p)) fail("{}: cannot read it: {}", p, *problem);
}

std::vector<path> safetensors_files_in(const path& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) fail("cannot list model directory {}: {}", dir, ec.message());
  std::vector<path> found;
  for (const auto& entry : it) {
    if (entry.path().extension() != ".safetensors") continue;
    require_usable(entry.path());
    found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

void check_file_index(const TensorInfo& t, size_t file_count, const path& source) {
  if (t.file_index < 0 || static_cast<size_t>(t.file_index) >= file_count) {
    fail("tensor '{}' refers to file #{}, but {} has {} file(s)", t.name, t.file_index, source,
         file_count);
  }
}

}  // namespace

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t dim : shape) n *= dim;
  return n;
}

TensorDirectory::TensorDirectory(TensorDirectory&& other) noexcept
    : source_(std::move(other.source_)),
      files_(std::move(other.files_)),
      fds_(std::move(other.fds_)),
      tensors_(std::move(other.tensors_)),
      by_name_(std::move(other.by_name_)),
      gguf_(other.gguf_) {
  other.fds_.clear();
}

TensorDirectory& TensorDirectory::operator=(TensorDirectory&& other) noexcept {
  if (this != &other) {
    close_all();
    source_ = std::move(other.source_);
    files_ = std::move(other.files_);
    fds_ = std::move(other.fds_);
    tensors_ = std::move(other.tensors_);
    by_name_ = std::move(other.by_name_);
    gguf_ = other.gguf_;
    other.fds_.clear();
  }
  return *this;
}

TensorDirectory::~TensorDirectory() {
  close_all();
}

void TensorDirectory::close_all() noexcept {
  for (int fd : fds_) close_fd(fd);
  fds_.clear();
}

int TensorDirectory::add_file(const path& file) {
  const int index = static_cast<int>(files_.size());
  // Register the descriptor before parsing so a header error still closes it.
  fds_.push_back(open_read_only(file));
  files_.push_back(file);
  auto tensors = read_safetensors_header(fds_.back(), file, index);
  std::move(tensors.begin(), tensors.end(), std::back_inserter(tensors_));
  return index;
}

void TensorDirectory::index_by_name() {
  by_name_.clear();
  by_name_.reserve(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const auto [it, inserted] = by_name_.try_emplace(tensors_[i].name, i);
    if (!inserted) {
      fail("tensor '{}' is stored twice, in {} and in {}", tensors_[i].name,
           files_[tensors_[it->second].file_index], files_[tensors_[i].file_index]);
    }
  }
}

TensorDirectory TensorDirectory::open_file(const path& file) {
  TensorDirectory dir;
  dir.source_ = file;
  dir.add_file(file);
  dir.index_by_name();
  return dir;
}

TensorDirectory TensorDirectory::planned(const std::vector<PlannedFileHeader>& files,
                                         const path& source) {
  TensorDirectory dir;
  dir.source_ = source;
  for (const PlannedFileHeader& f : files) {
    const int index = static_cast<int>(dir.files_.size());
    dir.files_.push_back(f.file);
    auto tensors = parse_safetensors_header(f.header, f.bytes, f.file, index);
    std::move(tensors.begin(), tensors.end(), std::back_inserter(dir.tensors_));
  }
  dir.index_by_name();
  return dir;
}

void TensorDirectory::require_readable(const TensorInfo& t) const {
  check_file_index(t, files_.size(), source_);
  if (fds_.size() != files_.size())
    fail("tensor '{}': {} is not written yet, nothing can be read from it", t.name,
         files_[t.file_index]);
}

TensorDirectory TensorDirectory::open(const path& model_dir) {
  if (is_gguf_model(model_dir)) return open_gguf(model_dir);
  struct stat st {};
  if (::stat(model_dir.c_str(), &st) != 0) {
    fail("model directory {}: {}", model_dir,
         errno == ELOOP    ? "its symbolic links form a loop"
         : errno == ENOENT ? "does not exist"
                           : std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) fail("model directory {} is not a directory", model_dir);
  const path index_file = model_dir / kIndexFile;
  require_usable(index_file);
  if (!is_existing_file(index_file)) {
    require_usable(model_dir / kSingleFile);
    if (is_existing_file(model_dir / kSingleFile)) return open_file(model_dir / kSingleFile);
    const auto candidates = safetensors_files_in(model_dir);
    if (candidates.size() == 1) return open_file(candidates.front());
    if (candidates.empty()) {
      fail("{} holds no {}, no {} and no other *.safetensors file", model_dir, kIndexFile,
           kSingleFile);
    }
    fail("{} holds several *.safetensors files ({}) but no {} saying which tensor is where",
         model_dir, fmt::join(candidates, ", "), kIndexFile);
  }

  const ShardIndex index = read_shard_index(index_file);
  TensorDirectory dir;
  dir.source_ = index_file;
  for (const path& shard : index.shards) {
    if (!is_existing_file(shard)) {
      fail("{} lists shard {}, which does not exist or is not a file", index_file, shard);
    }
    dir.add_file(shard);
  }
  dir.index_by_name();
  for (const auto& entry : index.weight_map) {
    const path& shard = index.shards[entry.shard];
    const TensorInfo* t = dir.find(entry.tensor);
    if (t == nullptr) {
      fail("{} maps tensor '{}' to shard {}, which has no such tensor", index_file, entry.tensor,
           shard);
    }
    if (dir.files_[t->file_index] != shard) {
      fail("{} maps tensor '{}' to shard {}, but the tensor is stored in {}", index_file,
           entry.tensor, shard, dir.files_[t->file_index]);
    }
  }
  return dir;
}

const TensorInfo* TensorDirectory::find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& TensorDirectory::at(std::string_view name) const {
  const TensorInfo* t = find(name);
  if (t == nullptr) fail("tensor '{}' not found in {}", name, source_);
  return *t;
}

void TensorDirectory::read_raw(const TensorInfo& t, std::span<std::byte> dst) const {
  require_readable(t);
  if (dst.size() != t.byte_size) {
    fail("tensor '{}' in {}: destination holds {} bytes, the tensor has {}", t.name,
         files_[t.file_index], dst.size(), t.byte_size);
  }
  pread_exact(fds_[t.file_index], t.offset, dst, files_[t.file_index],
              fmt::format("tensor '{}'", t.name));
}

void TensorDirectory::read_f32(const TensorInfo& t, std::span<float> dst) const {
  require_readable(t);
  if (t.dtype == DType::GGML) return read_ggml_f32(t, dst);
  if (!converts_to_f32(t.dtype)) {
    fail("tensor '{}' in {} is {}; only F32, BF16, F16 and F64 convert to f32", t.name, source_,
         dtype_name(t.dtype));
  }
  if (dst.size() != static_cast<size_t>(t.numel())) {
    fail("tensor '{}' in {}: destination holds {} floats, the tensor has {} elements", t.name,
         source_, dst.size(), t.numel());
  }
  const size_t element_size = dtype_size(t.dtype);
  const size_t chunk_elements = kConversionChunkBytes / element_size;
  const size_t chunks = (dst.size() + chunk_elements - 1) / chunk_elements;
  const path& file = files_[t.file_index];
  const int fd = fds_[t.file_index];
  const std::string what = fmt::format("tensor '{}'", t.name);
  std::vector<NonFiniteValues> non_finite(chunks);
  std::vector<std::exception_ptr> errors(chunks);
  // Each chunk is read, converted and scanned for NaN/inf while it is still
  // in cache, and chunks go in parallel: the scan costs no extra pass over
  // memory, and large tensors read faster than one pread after another.
#pragma omp parallel if (chunks > 1)
  {
    std::vector<std::byte> staging;
#pragma omp for schedule(dynamic)
    for (int64_t c = 0; c < static_cast<int64_t>(chunks); ++c) {
      try {
        const size_t first = static_cast<size_t>(c) * chunk_elements;
        const std::span<float> out =
            dst.subspan(first, std::min(chunk_elements, dst.size() - first));
        const uint64_t offset = t.offset + first * element_size;
        if (t.dtype == DType::F32) {
          pread_exact(fd, offset, std::as_writable_bytes(out), file, what);
          non_finite[c] = find_non_finite(out);
        } else {
          staging.resize(out.size() * element_size);
          pread_exact(fd, offset, staging, file, what);
          // Converted and scanned in blocks that stay in L1.
          for (size_t done = 0; done < out.size(); done += kScanBlock) {
            const size_t n = std::min(kScanBlock, out.size() - done);
            const std::span<float> block = out.subspan(done, n);
            convert_to_f32(
                t.dtype, std::span(staging).subspan(done * element_size, n * element_size), block);
            non_finite[c].merge(find_non_finite(block), done);
          }
        }
      } catch (...) {
        errors[c] = std::current_exception();
      }
    }
  }
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
  NonFiniteValues found;
  for (size_t c = 0; c < chunks; ++c) found.merge(non_finite[c], c * chunk_elements);
  if (found.count > 0) {
    fail(
        "tensor '{}' in {}: {} of its {} values are not finite, the first is {} at {}: weights "
        "must be finite numbers (the checkpoint is damaged or was converted with an overflow)",
        t.name, file, found.count, dst.size(), found.first_value,
        element_coordinates(found.first_index, t.shape));
  }
}

std::vector<float> TensorDirectory::read_f32(const TensorInfo& t) const {
  std::vector<float> values(static_cast<size_t>(t.numel()));
  read_f32(t, values);
  return values;
}

}  // namespace glmrt
