#include <glmrt/base/error.h>
#include <glmrt/convert/converted_file_writer.h>
#include <glmrt/convert/source_rows.h>
#include <glmrt/convert/streamed_file_writer.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <vector>

#include <glmrt/model_files/file_io.h>
#include "block_read_ahead.h"
#include "source_block_reader.h"
#include "source_checksum.h"

namespace glmrt {
namespace {

// Source bytes per block of rows (two blocks in flight: one decoded and
// encoded while the next is read).
constexpr uint64_t kBlockBytes = 16u << 20;

int64_t rows_per_block(uint64_t row_bytes) {
  return std::max<int64_t>(1, static_cast<int64_t>(kBlockBytes / std::max<uint64_t>(row_bytes, 1)));
}
constexpr uint64_t kCopyBytes = 8u << 20;

void copy_tensor(const TensorDirectory& dir, const TensorInfo& t, StreamedFileWriter& out,
                 SourceChecksum& sources, const std::function<void(uint64_t)>& consumed) {
  std::vector<std::byte> buffer;
  for (uint64_t at = 0; at < t.byte_size; at += kCopyBytes) {
    buffer.resize(std::min(kCopyBytes, t.byte_size - at));
    model_files::pread_exact(dir.fd(t.file_index), t.offset + at, buffer,
                             dir.files().at(t.file_index), fmt::format("tensor '{}'", t.name));
    sources.add_copied(buffer);
    out.append(buffer);
    consumed(buffer.size());
  }
}

// Rows per block of `source` (the planned order of the reads).
std::vector<SourceBlock> blocks_of(const SourceRows& source) {
  std::vector<SourceBlock> blocks;
  const int64_t block_rows = rows_per_block(source.row_bytes());
  for (int64_t first = 0; first < source.rows(); first += block_rows)
    blocks.push_back({&source, first, std::min(block_rows, source.rows() - first)});
  return blocks;
}

// Converts matrix `part` block by block into `out`; its scales (quantized
// formats) are left in `scales` for the scales tensor that follows. The rows
// of a block are decoded, checked and encoded in parallel while the next block
// is read: only the copy into the writer's buffer stays on this thread.
void convert_matrix_part(const ConvertedPart& part, const SourceRows& src,
                         const TensorDirectory& dir, BlockReadAhead& reads, StreamedFileWriter& out,
                         std::vector<float>& scales, std::span<const float> importance,
                         const GptqFactor* gptq, GptqScales gptq_scales,
                         const std::function<void(uint64_t)>& consumed) {
  const TensorInfo& t = *part.source;
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
  const uint64_t per_source_row =
      src.row_bytes() +
      (part.block_scales ? part.block_scales->byte_size / std::max<int64_t>(rows, 1) : 0);
  if (gptq && (!plugin::is_quantized(type) || gptq->cols != cols)) gptq = nullptr;
  std::vector<std::byte> packed;
  std::vector<float> block_values;  // gptq: the block's rows, the errors fed into them
  for (const SourceBlock& block : blocks_of(src)) {
    const int64_t first = block.first, n = block.rows;
    const std::span<const std::byte> bytes = reads.next(src, first, n);
    packed.resize(static_cast<size_t>(n * storage.row_bytes));
    MatrixStorage dst = storage;
    dst.rows = n;
    dst.data = packed.data();
    dst.scales = per_row ? scales.data() + first * per_row : nullptr;
    std::atomic<int64_t> first_bad{n};
    if (gptq) block_values.resize(static_cast<size_t>(n * cols));
#pragma omp parallel
    {
      // Cache-line aligned: the quantizer's vector loads never split a line.
      std::vector<float> row(static_cast<size_t>(cols) + 16);
      const auto misalignment = reinterpret_cast<uintptr_t>(row.data()) % 64 / sizeof(float);
      const std::span<float> values(row.data() + (misalignment ? 16 - misalignment : 0),
                                    static_cast<size_t>(cols));
#pragma omp for schedule(static)
      for (int64_t r = 0; r < n; ++r) {
        if (gptq) {
          const std::span<float> into(block_values.data() + r * cols, static_cast<size_t>(cols));
          if (src.decode_row(bytes, first, r, into)) continue;
        } else if (src.decode_row(bytes, first, r, values)) {
          encode_row(values, dst, r);
          continue;
        }
        int64_t seen = first_bad.load();
        while (r < seen && !first_bad.compare_exchange_weak(seen, r)) {
        }
      }
    }
    if (const int64_t r = first_bad.load(); r < n) {
      std::vector<float> values(static_cast<size_t>(cols));
      src.decode_row(bytes, first, r, values);
      const auto bad =
          std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
      if (bad == values.end())
        fail("tensor '{}' in {}: row {} holds a value that is not finite", t.name,
             dir.files().at(t.file_index), first + r);
      fail("tensor '{}' in {}: a value is not finite, {} at [{}, {}]: weights must be finite",
           t.name, dir.files().at(t.file_index), *bad, first + r, bad - values.begin());
    }
    if (gptq) gptq_encode_rows(block_values, n, *gptq, dst, 0, gptq_scales);
    out.append(packed);
    consumed(static_cast<uint64_t>(n) * per_source_row);
  }
}

}  // namespace

ConvertedFileChecksums write_converted_file(const std::filesystem::path& path,
                                            const PlannedFile& file,
                                            std::span<const ConvertedPart> parts,
                                            const TensorDirectory& dir,
                                            std::array<int64_t, 2> fp8_block,
                                            const std::function<void(uint64_t)>& consumed,
                                            const MatrixRounding& rounding) {
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
  // Every matrix's rows, and the order its blocks are read in, up front: the
  // reads run one block ahead across the whole file.
  std::vector<std::unique_ptr<SourceRows>> sources(parts.size());
  std::vector<SourceBlock> blocks;
  uint64_t largest_block = 0;
  SourceChecksum source_sum;
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].kind != ConvertedPart::Kind::values) continue;
    sources[k] =
        std::make_unique<SourceRows>(dir, *parts[k].source, parts[k].block_scales, fp8_block);
    if (const TensorInfo* s = parts[k].block_scales) {
      std::vector<std::byte> raw(s->byte_size);  // small: a value per 128x128 block
      dir.read_raw(*s, raw);
      source_sum.add_block_scales(raw);
    }
    for (const SourceBlock& b : blocks_of(*sources[k])) {
      blocks.push_back(b);
      largest_block =
          std::max(largest_block, static_cast<uint64_t>(b.rows) * sources[k]->row_bytes());
    }
  }
  SourceBlockReader reader(dir, largest_block);
  BlockReadAhead reads(reader, std::move(blocks), [&source_sum](std::span<const std::byte> bytes) {
    source_sum.add_matrix_rows(bytes);
  });
  std::vector<float> scales;
  for (size_t k = 0; k < parts.size(); ++k) {
    const PlannedTensor& t = file.tensors[k];
    const ConvertedPart& part = parts[k];
    out.pad_to(data_start + t.offset);
    switch (part.kind) {
      case ConvertedPart::Kind::copy:
        copy_tensor(dir, *part.source, out, source_sum, consumed);
        break;
      case ConvertedPart::Kind::values:
        convert_matrix_part(
            part, *sources[k], dir, reads, out, scales,
            rounding.importance ? rounding.importance(part.source->name) : std::span<const float>(),
            rounding.gptq && plugin::is_quantized(element_type_for(part.precision))
                ? rounding.gptq(part.source->name)
                : nullptr,
            rounding.gptq_scales, consumed);
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
  const uint64_t file_hash = out.finish();
  return {file_hash, source_sum.digest()};
}

}  // namespace glmrt
