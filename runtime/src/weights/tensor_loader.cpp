#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/model_files/non_finite.h>
#include <glmrt/model_files/parallel_reader.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/tensor_loader.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace glmrt {
namespace {

// Enough requests in flight for an NVMe drive's queue; the threads mostly wait.
constexpr int kIoThreads = 8;
// Bytes one read request (one task) covers: large enough to stream, small
// enough that a thread's staging buffer stays small.
constexpr uint64_t kTaskBytes = 8u << 20;

uint64_t stored_bytes(const StoredMatrix& m) {
  return m.values->byte_size + (m.scales ? m.scales->byte_size : 0);
}

// Matrices at least this large are read with O_DIRECT: the drive writes into
// them and no page cache copy costs CPU time (smaller ones are not worth the
// aligned window around them).
constexpr uint64_t kDirectMinBytes = 1u << 20;

// Reads `t` into `destination` in pieces of at most kTaskBytes whose file
// offsets start on kTaskBytes boundaries, so direct pieces' aligned windows
// never overlap.
// Pieces of a tensor whose offset is a multiple of its element size hold
// whole elements and are checked as they arrive; others after the whole read
// (require_finite_in_place).
void queue_in_place(ParallelReader& reader, const TensorDirectory& dir, const TensorInfo& t,
                    std::byte* destination, bool direct) {
  const size_t element = dtype_size(t.dtype);
  const bool whole_elements = is_float_dtype(t.dtype) && t.offset % element == 0;
  for (uint64_t at = 0; at < t.byte_size;) {
    const uint64_t boundary = (t.offset + at) / kTaskBytes * kTaskBytes + kTaskBytes;
    const uint64_t length = std::min(boundary - t.offset - at, t.byte_size - at);
    ReadTask task{{{&t, at, length, destination + at, direct}}, {}};
    if (whole_elements)
      task.then = [&dir, &t, first = at / element](std::span<const std::span<const std::byte>> b) {
        require_finite(dir, t, b[0], first);
      };
    reader.submit(std::move(task));
    at += length;
  }
}

// ggml blocks kept as they are: no scale holding NaN or infinity may reach the
// kernels (first_non_finite_ggml reads the scales, not every value).
void require_finite_blocks(const TensorDirectory& dir, const TensorInfo& t, const std::byte* data) {
  const int64_t cols = t.shape.back();
  const int64_t values = static_cast<int64_t>(t.byte_size) / t.row_bytes() * cols;
  const int64_t bad = first_non_finite_ggml(t.ggml_type, {data, t.byte_size}, values);
  if (bad >= 0)
    fail(
        "tensor '{}' in {}: its {} blocks of row {} dequantize to a value that is not finite "
        "(weights must be finite)",
        printable(t.name), dir.files().at(t.file_index).string(), ggml_type_name(t.ggml_type),
        bad / cols);
}

void require_finite_in_place(const TensorDirectory& dir, const TensorInfo& t,
                             const std::byte* data) {
  if (is_float_dtype(t.dtype) && t.offset % dtype_size(t.dtype) != 0)
    require_finite(dir, t, {data, t.byte_size}, 0);
  if (t.dtype == DType::GGML) require_finite_blocks(dir, t, data);
}

// Reads blocks of rows of `m` (and their scales) into the reading thread's
// buffers and hands each block to `use`.
void queue_row_blocks(ParallelReader& reader, const TensorDirectory& dir, const StoredMatrix& m,
                      int64_t granularity, const TensorLoader::RowsUse& use) {
  const DType dtype = m.prequantized() ? DType::U8 : m.values->dtype;
  const int64_t row_bytes =
      static_cast<int64_t>(m.values->byte_size) / std::max<int64_t>(m.rows, 1);
  const int64_t rows_per_task =
      std::max<int64_t>(
          1, static_cast<int64_t>(kTaskBytes) / std::max<int64_t>(row_bytes, 1) / granularity) *
      granularity;
  for (int64_t first = 0; first < m.rows; first += rows_per_task) {
    const int64_t rows = std::min(rows_per_task, m.rows - first);
    ReadTask task;
    task.pieces.push_back({m.values, static_cast<uint64_t>(first * row_bytes),
                           static_cast<uint64_t>(rows * row_bytes), nullptr});
    const uint64_t scale_bytes =
        4u * static_cast<uint64_t>(MatrixStorage::scales_per_row_of(m.cols, m.group_size));
    if (m.scales)
      task.pieces.push_back({m.scales, static_cast<uint64_t>(first) * scale_bytes,
                             static_cast<uint64_t>(rows) * scale_bytes, nullptr});
    task.then = [&dir, &m, &use, dtype, first,
                 rows](std::span<const std::span<const std::byte>> bytes) {
      if (m.scales)
        require_finite(dir, *m.scales, bytes[1], static_cast<uint64_t>(first));
      else
        require_finite(dir, *m.values, bytes[0], static_cast<uint64_t>(first * m.cols));
      SourceMatrix src;
      src.dtype = dtype;
      src.packed_type = m.packed_type;
      src.ggml_type = m.values->ggml_type;
      src.data = bytes[0];
      if (m.scales) {
        // Scales are F32 in the file; the thread's buffer holds them aligned.
        src.scales = {reinterpret_cast<const float*>(bytes[1].data()), bytes[1].size() / 4};
      }
      src.rows = rows;
      src.cols = m.cols;
      src.group_size = m.group_size;
      src.check(fmt::format("tensor {}", m.values->name));
      use(src, first);
    };
    reader.submit(std::move(task));
  }
}

// f32 values above bf16's largest finite value (about 3.39e38) round to inf.
void require_finite_bf16(const MatrixStorage& m, int64_t first_row, int64_t rows,
                         const std::string& name) {
  if (m.type != GLMRT_BF16) return;
  for (int64_t r = first_row; r < first_row + rows; ++r) {
    const auto* row = reinterpret_cast<const uint16_t*>(m.data + r * m.row_bytes);
    for (int64_t c = 0; c < m.cols; ++c)
      if ((row[c] & 0x7f80u) == 0x7f80u)
        fail(
            "tensor '{}': a value at [{}, {}] is not finite in bf16 (bf16's largest finite value "
            "is about 3.39e38)",
            name, r, c);
  }
}

}  // namespace

TensorLoader::TensorLoader(const TensorDirectory& tensors, MemoryBudget* budget, TensorUsage* usage,
                           Mode mode)
    : tensors_(tensors), budget_(budget), usage_(usage), mode_(mode) {}

void TensorLoader::mark_used(const StoredMatrix& stored) const {
  if (!usage_) return;
  usage_->mark(*stored.values);
  if (stored.scales) usage_->mark(*stored.scales);
}

Matrix TensorLoader::matrix(const std::string& name, int64_t rows, int64_t cols,
                            WeightPrecision precision, const std::string& category,
                            std::optional<WeightPrecision> also_adopt) {
  const StoredMatrix stored = find_stored_matrix(tensors_, name, rows, cols);
  mark_used(stored);
  if (checks_only()) return {};
  const int kept = stored.kept_element_type();
  if (precision.stored && kept < 0) fail_not_keepable(tensors_, *stored.values);
  uint32_t type = precision.stored ? static_cast<uint32_t>(kept) : element_type_for(precision);
  if (also_adopt && !also_adopt->stored && stored.prequantized() &&
      stored.packed_type == element_type_for(*also_adopt))
    type = stored.packed_type;
  if (kept == static_cast<int>(type)) {
    const bool direct = stored.values->byte_size >= kDirectMinBytes;
    Matrix m = direct ? Matrix::allocate_for_direct_read(type, rows, cols, stored.values->offset,
                                                         budget_, category, stored.group_size)
                      : Matrix::allocate(type, rows, cols, budget_, category, stored.group_size);
    pending_.push_back({stored, m.storage(), {}, 1, direct});
    return m;
  }
  Matrix m = Matrix::allocate(type, rows, cols, budget_, category, precision.group);
  const MatrixStorage storage = m.storage();
  if (stored.prequantized())
    summary_.requantized.push_back(
        fmt::format("{} ({} -> {})", name, stored.format_name(), precision_name(precision)));
  pending_.push_back({stored,
                      {},
                      [storage, name](const SourceMatrix& src, int64_t first_row) {
                        convert_rows(src, storage, first_row);
                        require_finite_bf16(storage, first_row, src.rows, name);
                      },
                      1,
                      false});
  return m;
}

void TensorLoader::read_matrix(const std::string& name, int64_t rows, int64_t cols,
                               int64_t row_granularity, RowsUse use) {
  if (row_granularity < 1 || rows % row_granularity != 0)
    fail("read_matrix {}: {} rows do not split into blocks of {}", name, rows, row_granularity);
  const StoredMatrix stored = find_stored_matrix(tensors_, name, rows, cols);
  mark_used(stored);
  if (!checks_only()) pending_.push_back({stored, {}, std::move(use), row_granularity, false});
}

std::vector<float> TensorLoader::vector(const std::string& name, int64_t n) const {
  const TensorInfo& t = tensors_.at(name);
  if (usage_) usage_->mark(t);
  if (t.shape != std::vector<int64_t>{n})
    fail("tensor {} in {} has shape [{}], the config implies [{}]", name,
         tensors_.files().at(t.file_index), fmt::join(t.shape, ", "), n);
  if (!is_float_dtype(t.dtype))
    fail("tensor {} in {} is {}: a norm or bias is F32, BF16, F16 or F64", name,
         tensors_.files().at(t.file_index), dtype_name(t.dtype));
  if (checks_only()) return {};
  return tensors_.read_f32(t);
}

const LoadSummary& TensorLoader::finish() {
  if (checks_only()) return summary_;
  const auto start = std::chrono::steady_clock::now();
  uint64_t total = 0;
  for (const Pending& p : pending_) total += stored_bytes(p.stored);
  ProgressBar bar("loading", total);
  {
    ParallelReader reader(tensors_, kIoThreads);
    for (const Pending& p : pending_) {
      if (p.in_place.data) {
        queue_in_place(reader, tensors_, *p.stored.values, p.in_place.data, p.direct);
        if (p.stored.scales)
          queue_in_place(reader, tensors_, *p.stored.scales,
                         reinterpret_cast<std::byte*>(p.in_place.scales), false);
        ++summary_.tensors_read_in_place;
      } else {
        queue_row_blocks(reader, tensors_, p.stored, p.row_granularity, p.use);
        ++summary_.tensors_converted;
      }
    }
    reader.wait_all([&](uint64_t done) { bar.update(done); });
  }
  bar.finish();
  for (const Pending& p : pending_) {
    if (!p.in_place.data) continue;
    require_finite_in_place(tensors_, *p.stored.values, p.in_place.data);
    if (p.stored.scales)
      require_finite_in_place(tensors_, *p.stored.scales,
                              reinterpret_cast<const std::byte*>(p.in_place.scales));
  }
  pending_.clear();
  summary_.bytes += total;
  summary_.seconds += seconds_since(start);
  return summary_;
}

}  // namespace glmrt
