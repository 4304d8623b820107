// Activation statistics for importance-weighted quantization: per weight
// matrix, the mean of x^2 over the calibration tokens for each input channel
// (the statistic llama.cpp's imatrix collects). `glmrt calibrate` writes
// them, `glmrt convert --importance` weights the per-group scale search with
// them. The file is a safetensors file (docs/convert.md "Importance file"):
// one F32 vector [cols] per matrix, named after the weight it weights, and in
// __metadata__ "format": "glmrt-importance-1", "tokens" and, per tensor,
// "rows.<name>" (how many input rows its mean is over).
//
// Version 2 ("glmrt-importance-2") adds second-moment matrices for
// error-compensating rounding: F32 [cols, cols] tensors "moment.<key>" (the
// sum over calibration rows of x x^T, accumulated in f32), "rows.moment.<key>"
// and, per weight whose input one describes, "moment_of.<weight>" naming it.
// They are read one at a time when a matrix needs them, never whole.
#pragma once

#include <glmrt/base/atomic_file.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace glmrt {

struct ImportanceTable {
  struct Entry {
    std::vector<float> mean_square;  // [cols]
    int64_t rows = 0;                // input rows averaged
  };
  std::map<std::string, Entry> entries;  // by weight name
  int64_t tokens = 0;                    // calibration tokens run

  /// Where a weight's second moments lie in `file` (version 2).
  struct MomentRef {
    std::string tensor;  // "moment.model.layers.3.post_attention_layernorm"
    int64_t cols = 0, rows = 0;
    uint64_t offset = 0;  // of the F32 data in the file
  };
  std::filesystem::path file;  // the file read (for the moments)
  int version = 1;
  std::map<std::string, MomentRef> moments;  // by weight name
  /// A routed expert's gate/up: the layer's shared moments, for when its own
  /// are thin or absent (files written before per-expert gate/up have none).
  std::map<std::string, MomentRef> fallback_moments;

  /// The second moments of `weight`'s input, or nullptr.
  const MomentRef* find_moments(const std::string& weight) const;
  /// The shared second moments `weight` falls back on, or nullptr.
  const MomentRef* find_fallback_moments(const std::string& weight) const;
  /// Reads one matrix [cols, cols] from `file`; refuses a non-finite value
  /// naming the file and the tensor.
  std::vector<float> read_moments(const MomentRef& ref) const;

  /// The statistics of `weight`, empty when it has none (an expert no token
  /// was routed to, a tensor no product reads).
  std::span<const float> find(const std::string& weight) const;
};

inline constexpr const char* kImportanceFormat = "glmrt-importance-1";
inline constexpr const char* kImportanceFormatWithMoments = "glmrt-importance-2";

/// What calibrate writes: an existing file is an earlier importance file when
/// it is safetensors whose header gives one of the two formats above.
OutputKind importance_output_kind();

/// Writes `table` to `file` atomically under the output rule
/// (base/atomic_file.h: never inside `model_folder`, over a device, or over
/// a file that is no importance file unless `force`).
void write_importance_file(const std::filesystem::path& file, const ImportanceTable& table,
                           const std::filesystem::path& model_folder = {}, bool force = false);

/// Writes a version-2 file: the second moments go to a temporary file beside
/// `file` as each calibration pass finishes (add), and finish() writes the
/// header, the diagonal statistics and copies them in, then renames: memory
/// holds only the pass's matrices. `file` is checked against the output rule
/// (as write_importance_file's) when the writer starts and again at the end.
class ImportanceFileWriter {
 public:
  explicit ImportanceFileWriter(std::filesystem::path file,
                                const std::filesystem::path& model_folder = {}, bool force = false);
  ~ImportanceFileWriter();
  ImportanceFileWriter(const ImportanceFileWriter&) = delete;
  ImportanceFileWriter& operator=(const ImportanceFileWriter&) = delete;
  void add_moment(const std::string& key, int64_t cols, int64_t rows, std::span<const float> sums);
  /// `weight_keys`: each weight's input key; weights whose key got no
  /// matrix are written without one.
  /// `weight_fallbacks`: weight -> the shared key it falls back on.
  void finish(const ImportanceTable& table, const std::map<std::string, std::string>& weight_keys,
              const std::map<std::string, std::string>& weight_fallbacks = {});
  int64_t moments() const { return static_cast<int64_t>(added_.size()); }

 private:
  struct Added {
    std::string key;
    int64_t cols, rows;
    uint64_t offset;
  };
  std::filesystem::path file_, data_file_;
  OutputRule rule_;
  std::vector<Added> added_;
  uint64_t data_bytes_ = 0;
  int fd_ = -1;
};

/// Reads and checks a file written by write_importance_file; anything else
/// (not safetensors, another format tag, a tensor that is not a finite,
/// non-negative F32 vector, offsets outside the file) is refused naming the
/// file and the tensor.
ImportanceTable read_importance_file(const std::filesystem::path& file);

}  // namespace glmrt
