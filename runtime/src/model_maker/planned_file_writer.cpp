#include <glmrt/model_maker/output_file.h>
#include <glmrt/model_maker/planned_file_writer.h>

#include <fcntl.h>
#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "weight_fill.h"

namespace glmrt {
namespace {

constexpr uint64_t kDirectAlignment = 4096;
// Writers in flight: the drive needs a queue of a few requests, and a writer
// that waits for the disk leaves its core to one that generates.
constexpr int kMinWriters = 4;

/// Puts the bytes of file range [lo, lo + region.size()) into `region`:
/// header bytes, tensor bytes, zeros in the gaps. Whole rows are generated in
/// place; a row cut by the region's edge goes through `scratch`.
void assemble_region(const PlannedFile& file, const std::string& head, uint64_t data_start,
                     uint64_t seed, uint64_t lo, std::span<std::byte> region,
                     std::vector<std::byte>& scratch) {
  const uint64_t hi = lo + region.size();
  uint64_t cursor = lo;  // everything before it is written
  auto zero_until = [&](uint64_t end) {
    if (end > cursor) std::memset(region.data() + (cursor - lo), 0, end - cursor);
    cursor = std::max(cursor, end);
  };
  if (lo < head.size()) {
    const uint64_t n = std::min<uint64_t>(head.size(), hi) - lo;
    std::memcpy(region.data(), head.data() + lo, n);
    cursor = lo + n;
  }
  // First tensor ending after lo (tensors are in offset order).
  auto it = std::partition_point(file.tensors.begin(), file.tensors.end(), [&](const auto& t) {
    return data_start + t.offset + t.bytes <= lo;
  });
  for (; it != file.tensors.end() && data_start + it->offset < hi; ++it) {
    const PlannedTensor& t = *it;
    const uint64_t start = data_start + t.offset;
    const uint64_t rb = t.bytes / static_cast<uint64_t>(t.generation_rows());
    const uint64_t from = std::max(start, lo), to = std::min(start + t.bytes, hi);
    zero_until(from);
    auto partial_row = [&](int64_t row, uint64_t a, uint64_t b) {  // file bytes [a, b)
      scratch.resize(rb);
      fill_tensor_rows(t, seed, row, 1, scratch);
      std::memcpy(region.data() + (a - lo), scratch.data() + (a - start - row * rb), b - a);
    };
    int64_t row = static_cast<int64_t>((from - start) / rb);
    if (start + row * rb < from) {  // the region starts inside this row
      partial_row(row, from, std::min(to, start + (row + 1) * rb));
      ++row;
    }
    const int64_t full_end = static_cast<int64_t>((to - start) / rb);
    if (full_end > row) {
      fill_tensor_rows(t, seed, row, full_end - row,
                       region.subspan(start + row * rb - lo, (full_end - row) * rb));
      row = full_end;
    }
    if (start + row * rb < to) partial_row(row, start + row * rb, to);  // ends inside a row
    cursor = to;
  }
  zero_until(hi);
}

}  // namespace

void write_planned_file(const std::filesystem::path& path, const PlannedFile& file, uint64_t seed,
                        std::atomic<uint64_t>& written, ProgressBar& bar, uint64_t region_bytes) {
  // The file is written in regions, each assembled in memory (header, tensor
  // bytes, zeroed gaps) and written with one O_DIRECT request.
  if (region_bytes == 0 || region_bytes % kDirectAlignment != 0)
    fail("write_planned_file: region size {} is not a multiple of {}", region_bytes,
         kDirectAlignment);
  OutputFile out(path);
  const std::string header = file.header();
  std::string head(8, '\0');
  for (int i = 0; i < 8; ++i)
    head[i] = static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xff);
  head += header;
  const uint64_t data_start = head.size();
  const uint64_t file_bytes = data_start + file.data_bytes;
  const int64_t regions = static_cast<int64_t>((file_bytes + region_bytes - 1) / region_bytes);
  out.reserve((file_bytes + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment);

  std::string error;
  const int writers = std::max(kMinWriters, omp_get_max_threads());
#pragma omp parallel num_threads(writers)
  {
    AlignedBlock buffer(region_bytes, kDirectAlignment);
    std::vector<std::byte> rows;
#pragma omp for schedule(dynamic, 1)
    for (int64_t k = 0; k < regions; ++k) {
      const uint64_t lo = static_cast<uint64_t>(k) * region_bytes;
      const uint64_t size = std::min(region_bytes, file_bytes - lo);
      std::string e;
      try {  // nothing may leave an OpenMP region by exception
        assemble_region(file, head, data_start, seed, lo, {buffer.data(), size}, rows);
        // O_DIRECT wants whole blocks: the last region is written zero-padded
        // and the file cut back to size afterwards.
        const uint64_t padded = (size + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment;
        std::memset(buffer.data() + size, 0, padded - size);
        e = out.write_at(lo, buffer.data(), padded);
      } catch (const std::exception& x) {
        e = x.what();
      }
      if (!e.empty()) {
#pragma omp critical(planned_file_error)
        if (error.empty()) error = e;
      }
      bar.update(written += size);
    }
  }
  if (!error.empty()) fail("{}", error);
  out.finish(file_bytes);
}

}  // namespace glmrt
