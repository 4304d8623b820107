#include <glmrt/base/error.h>
#include <glmrt/convert/converted_file_writer.h>
#include <glmrt/convert/source_rows.h>
#include <glmrt/convert/streamed_file_writer.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../model_files/file_io.h"

namespace glmrt {
namespace {

// Values decoded to f32 per block: 8M floats (32 MB).
constexpr int64_t kBlockValues = 8 << 20;
constexpr uint64_t kCopyBytes = 8u << 20;

void copy_tensor(const TensorDirectory& dir, const TensorInfo& t, StreamedFileWriter& out,
                 const std::function<void(uint64_t)>& consumed) {
  std::vector<std::byte> buffer;
  for (uint64_t at = 0; at < t.byte_size; at += kCopyBytes) {
    buffer.resize(std::min(kCopyBytes, t.byte_size - at));
    model_files::pread_exact(dir.fd(t.file_index), t.offset + at, buffer,
                             dir.files().at(t.file_index), fmt::format("tensor '{}'", t.name));
    out.append(buffer);
    consumed(buffer.size());
  }
}

void require_finite_rows(std::span<const float> values, const TensorInfo& t,
                         const TensorDirectory& dir, int64_t first_row, int64_t cols) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      fail("tensor '{}' in {}: a value is not finite, {} at [{}, {}]: weights must be finite",
           t.name, dir.files().at(t.file_index), values[i], first_row + int64_t(i) / cols,
           int64_t(i) % cols);
}

// Converts matrix `part` block by block into `out`; its scales (quantized
// formats) are left in `scales` for the scales tensor that follows.
void convert_matrix_part(const ConvertedPart& part, const TensorDirectory& dir,
                         std::array<int64_t, 2> block, StreamedFileWriter& out,
                         std::vector<float>& scales, std::span<const float> importance,
                         const std::function<void(uint64_t)>& consumed) {
  const TensorInfo& t = *part.source;
  const SourceRows src(dir, t, part.block_scales, block);
  const int64_t rows = src.rows(), cols = src.cols();
  if (!importance.empty() && static_cast<int64_t>(importance.size()) != cols)
    fail("importance statistics for {} hold {} values, the matrix has {} columns", t.name,
         importance.size(), cols);
  const uint32_t type = element_type_for(part.precision);
  MatrixStorage storage;
  storage.type = type;
  storage.cols = cols;
  storage.row_bytes = plugin::packed_row_bytes(type, cols);
  storage.group_size = part.precision.group;
  storage.importance = importance.empty() ? nullptr : importance.data();
  const int64_t per_row = plugin::is_quantized(type) ? storage.scales_per_row() : 0;
  scales.assign(static_cast<size_t>(rows * per_row), 0.f);
  const int64_t block_rows = std::max<int64_t>(1, kBlockValues / std::max<int64_t>(cols, 1));
  std::vector<float> values;
  std::vector<std::byte> raw, packed;
  const uint64_t per_source_row =
      src.row_bytes() +
      (part.block_scales ? part.block_scales->byte_size / std::max<int64_t>(rows, 1) : 0);
  for (int64_t first = 0; first < rows; first += block_rows) {
    const int64_t n = std::min(block_rows, rows - first);
    values.resize(static_cast<size_t>(n * cols));
    src.read(first, n, values, raw);
    require_finite_rows(values, t, dir, first, cols);
    packed.resize(static_cast<size_t>(n * storage.row_bytes));
    MatrixStorage dst = storage;
    dst.rows = n;
    dst.data = packed.data();
    dst.scales = per_row ? scales.data() + first * per_row : nullptr;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; ++r)
      encode_row(std::span<const float>(values).subspan(static_cast<size_t>(r * cols), cols), dst,
                 r);
    out.append(packed);
    consumed(static_cast<uint64_t>(n) * per_source_row);
  }
}

}  // namespace

uint64_t write_converted_file(
    const std::filesystem::path& path, const PlannedFile& file,
    std::span<const ConvertedPart> parts, const TensorDirectory& dir,
    std::array<int64_t, 2> fp8_block, const std::function<void(uint64_t)>& consumed,
    const std::function<std::span<const float>(const std::string&)>& importance) {
  if (parts.size() != file.tensors.size())
    fail("write_converted_file {}: {} parts for {} tensors", path, parts.size(),
         file.tensors.size());
  const std::string header = file.header();
  std::string head(8, '\0');
  for (int i = 0; i < 8; ++i)
    head[i] = static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xff);
  head += header;
  StreamedFileWriter out(path, file.file_bytes());
  out.append(std::as_bytes(std::span(head)));
  const uint64_t data_start = head.size();
  std::vector<float> scales;
  for (size_t k = 0; k < parts.size(); ++k) {
    const PlannedTensor& t = file.tensors[k];
    const ConvertedPart& part = parts[k];
    out.pad_to(data_start + t.offset);
    switch (part.kind) {
      case ConvertedPart::Kind::copy:
        copy_tensor(dir, *part.source, out, consumed);
        break;
      case ConvertedPart::Kind::values:
        convert_matrix_part(part, dir, fp8_block, out, scales,
                            importance ? importance(part.source->name) : std::span<const float>(),
                            consumed);
        break;
      case ConvertedPart::Kind::scales:
        if (scales.size() * sizeof(float) != t.bytes)
          fail("write_converted_file {}: {} holds {} bytes of scales, {} planned", path, t.name,
               scales.size() * sizeof(float), t.bytes);
        out.append(std::as_bytes(std::span(scales)));
        break;
    }
    if (out.position() != data_start + t.offset + t.bytes)
      fail("write_converted_file {}: tensor {} ends at byte {}, planned {}", path, t.name,
           out.position(), data_start + t.offset + t.bytes);
  }
  return out.finish();
}

}  // namespace glmrt
