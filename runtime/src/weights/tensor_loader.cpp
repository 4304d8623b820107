#include <glmrt/base/error.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/model_files/parallel_reader.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/tensor_loader.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

namespace glmrt {
namespace {

// Enough requests in flight for an NVMe drive's queue; the threads mostly wait.
constexpr int kIoThreads = 8;
// Tensors that need converting are read into staging memory first; this bounds
// how much of it is in use at once (a larger tensor is staged alone).
constexpr uint64_t kStagingWindowBytes = 512ull << 20;

uint64_t stored_bytes(const StoredMatrix& m) {
  return m.values->byte_size + (m.scales ? m.scales->byte_size : 0);
}

}  // namespace

struct TensorLoader::Staging {
  AlignedBlock values;
  std::vector<float> scales;
};

TensorLoader::TensorLoader(const TensorDirectory& tensors, MemoryBudget* budget)
    : tensors_(tensors), budget_(budget) {}

Matrix TensorLoader::matrix(const std::string& name, int64_t rows, int64_t cols, WeightBits bits,
                            const std::string& category) {
  const StoredMatrix stored = find_stored_matrix(tensors_, name, rows, cols);
  const uint32_t type = element_type_for(bits);
  Matrix m = Matrix::allocate(type, rows, cols, budget_, category);
  const MatrixStorage storage = m.storage();
  if (stored.element_type() == static_cast<int>(type)) {
    pending_.push_back({stored, storage, {}});
    return m;
  }
  if (stored.prequantized())
    summary_.requantized.push_back(
        fmt::format("{} ({} -> {})", name, stored.format_name(), plugin::element_type_name(type)));
  pending_.push_back({stored, {}, [storage](const SourceMatrix& src, const StoredMatrix&) {
                        convert_rows(src, storage);
                      }});
  return m;
}

void TensorLoader::read_matrix(const std::string& name, int64_t rows, int64_t cols, MatrixUse use) {
  pending_.push_back({find_stored_matrix(tensors_, name, rows, cols), {}, std::move(use)});
}

std::vector<float> TensorLoader::vector(const std::string& name, int64_t n) const {
  const TensorInfo& t = tensors_.at(name);
  if (t.shape != std::vector<int64_t>{n})
    fail("tensor {} in {} has shape [{}], the config implies [{}]", name,
         tensors_.files().at(t.file_index), fmt::join(t.shape, ", "), n);
  return tensors_.read_f32(t);
}

void TensorLoader::convert_staged(Pending& p, Staging& staging) {
  const StoredMatrix& m = p.stored;
  SourceMatrix src;
  src.dtype = m.prequantized() ? DType::U8 : m.values->dtype;
  src.packed_type = m.packed_type;
  src.data = {staging.values.data(), staging.values.size()};
  src.scales = staging.scales;
  src.rows = m.rows;
  src.cols = m.cols;
  src.check(fmt::format("tensor {}", m.values->name));
  p.use(src, m);
}

const LoadSummary& TensorLoader::finish() {
  const auto start = std::chrono::steady_clock::now();
  uint64_t total = 0;
  for (const Pending& p : pending_) total += stored_bytes(p.stored);
  ProgressBar bar("loading", total);
  std::vector<Staging> staging(pending_.size());
  uint64_t staged_bytes = 0;
  size_t next = 0, done = 0;
  {
    ParallelReader reader(tensors_, kIoThreads);
    while (done < pending_.size()) {
      // Queue reads in file order while the staging window allows.
      for (; next < pending_.size(); ++next) {
        Pending& p = pending_[next];
        const TensorInfo* values = p.stored.values;
        const TensorInfo* scales = p.stored.scales;
        std::vector<ReadPiece> pieces;
        if (p.in_place.data) {
          pieces.push_back({values, {p.in_place.data, values->byte_size}});
          if (scales)
            pieces.push_back(
                {scales, {reinterpret_cast<std::byte*>(p.in_place.scales), scales->byte_size}});
          ++summary_.tensors_read_in_place;
        } else {
          const uint64_t need = stored_bytes(p.stored);
          if (staged_bytes > 0 && staged_bytes + need > kStagingWindowBytes) break;
          Staging& s = staging[next];
          s.values = AlignedBlock(values->byte_size, 64, budget_, "load staging");
          pieces.push_back({values, {s.values.data(), s.values.size()}});
          if (scales) {
            s.scales.resize(static_cast<size_t>(p.stored.rows));
            pieces.push_back({scales, std::as_writable_bytes(std::span(s.scales))});
          }
          staged_bytes += need;
          ++summary_.tensors_converted;
        }
        reader.submit(pieces);  // group id == index into pending_
      }
      if (const auto group = reader.wait_any(std::chrono::milliseconds(100))) {
        Pending& p = pending_[*group];
        if (!p.in_place.data) {
          convert_staged(p, staging[*group]);
          staged_bytes -= stored_bytes(p.stored);
          staging[*group] = {};
        }
        ++done;
      }
      bar.update(reader.bytes_read());
    }
  }
  bar.finish();
  pending_.clear();
  summary_.bytes += total;
  summary_.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary_;
}

}  // namespace glmrt
