// The tensors of a model directory: one model.safetensors, or shards listed by
// model.safetensors.index.json. Every header is validated when opened.
#pragma once

#include <glmrt/base/weight_precision.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace glmrt {

/// GGML: a quantized tensor of a GGUF model, in blocks of the ggml type
/// TensorInfo::ggml_type (F32, F16 and BF16 ones are F32, F16 and BF16).
enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL, F8_E4M3, F8_E5M2, GGML };

std::string_view dtype_name(DType d);
size_t dtype_size(DType d);
/// True for the dtypes decode_to_f32 accepts (F32, F16, BF16, F64).
bool is_float_dtype(DType d);
/// Decodes raw little-endian values of a float dtype into f32 (exact for
/// F32/BF16/F16); src.size() must be dst.size() * dtype_size(d).
void decode_to_f32(DType d, std::span<const std::byte> src, std::span<float> dst);

/// The format a container stamps on a tensor in its header's
/// `__metadata__["quant_formats"]`: a string holding a JSON object
/// {tensor name: "f32" | "bf16" | "int8" | "int4" | "int3" | "int2" | "int4-g64" |
/// "int3-k32" ...} (a packed format with -gN has per-group scales in
/// `<name>.gqs`, as a two-level one -kN has its per-256 scales). A stamp is
/// trusted over guesses from byte counts, and checked against them.
enum class StampedFormat : uint8_t { none, f32, bf16, int8, int4, int2, int3, int4k, int3k, int2k };

/// "int4", "int3-k32", ...
std::string_view stamped_format_name(StampedFormat f);
/// The precision a stamp (with its group size, 0 = per row) stands for;
/// nullopt for none.
std::optional<WeightPrecision> stamped_precision(StampedFormat f, uint32_t group);
/// The stamp of a precision, as written into a container's header.
StampedFormat stamp_of_precision(WeightPrecision p);
/// The stamp text of a tensor: "int4-g64", "int3-k32", "bf16", ...
std::string stamp_text(StampedFormat f, uint32_t group);

struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  int file_index;   // into TensorDirectory::files()
  uint64_t offset;  // absolute byte offset in that file
  uint64_t byte_size;
  StampedFormat stamp = StampedFormat::none;
  uint32_t stamp_group = 0;  // N of a "-gN" stamp
  uint32_t ggml_type = 0;    // glmrt_ggml_type when dtype is GGML
  int64_t numel() const;
  /// Bytes of one row (the last dimension): shape.back() elements.
  int64_t row_bytes() const;
};

class TensorDirectory {
 public:
  /// Opens DIR/model.safetensors.index.json if present, else DIR/model.safetensors,
  /// else the only *.safetensors file. Throws glmrt::Error naming the file.
  static TensorDirectory open(const std::filesystem::path& model_dir);
  /// Opens one .safetensors file.
  static TensorDirectory open_file(const std::filesystem::path& file);
  /// Opens a GGUF model (a .gguf file, the first shard of a split one, or a
  /// folder holding one) with its tensors under the Hugging Face names the
  /// model loads (docs/gguf.md): a routed experts tensor becomes one view per
  /// expert, attn_k_b / attn_v_b the two halves of kv_b_proj as attention
  /// uses them. open() opens one where it finds one (is_gguf_model).
  static TensorDirectory open_gguf(const std::filesystem::path& path);
  /// True when this directory was opened from a GGUF model.
  bool is_gguf() const { return gguf_; }

  /// A file not written yet: its header's JSON (what follows the 8-byte
  /// length) and its size.
  struct PlannedFileHeader {
    std::filesystem::path file;
    std::string header;
    uint64_t bytes = 0;
  };
  /// The tensors of files not written yet, from their headers, validated as
  /// open() validates them: a planned layout answers as the written files
  /// will (`glmrt convert` checks its output before writing it). Nothing can
  /// be read from it. `source` is what messages name it by (the input it is
  /// planned from).
  static TensorDirectory planned(const std::vector<PlannedFileHeader>& files,
                                 const std::filesystem::path& source);

  TensorDirectory(TensorDirectory&&) noexcept;
  TensorDirectory& operator=(TensorDirectory&&) noexcept;
  ~TensorDirectory();

  const std::vector<std::filesystem::path>& files() const { return files_; }
  const TensorInfo* find(std::string_view name) const;
  /// Throws naming the tensor and the directory when absent.
  const TensorInfo& at(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  /// Raw bytes of a tensor (dst.size() must equal byte_size).
  void read_raw(const TensorInfo& t, std::span<std::byte> dst) const;
  /// The tensor as f32 (F32, BF16, F16, F64 converted); dst.size() == numel.
  /// Throws naming the tensor, the file and the first such element when any
  /// value is NaN or infinite (after conversion: an F64 beyond the f32 range
  /// counts): no weight may be. Large tensors are read in parallel chunks.
  void read_f32(const TensorInfo& t, std::span<float> dst) const;
  std::vector<float> read_f32(const TensorInfo& t) const;

  /// The OS file descriptor of files()[i] (opened read-only, O_CLOEXEC).
  int fd(int file_index) const { return fds_.at(file_index); }

 private:
  TensorDirectory() = default;
  /// Opens `file`, validates its header and adds its tensors; returns its index.
  int add_file(const std::filesystem::path& file);
  /// Builds by_name_, refusing a name found in two files.
  void index_by_name();
  /// Throws unless `t`'s file is open (a planned directory has none).
  void require_readable(const TensorInfo& t) const;
  void close_all() noexcept;
  /// read_f32 of a DType::GGML tensor: dequantized row by row.
  void read_ggml_f32(const TensorInfo& t, std::span<float> dst) const;

  std::filesystem::path source_;  // the index file, single file or directory: for messages
  std::vector<std::filesystem::path> files_;
  std::vector<int> fds_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> by_name_;
  bool gguf_ = false;
};

/// True when `path` names a GGUF model: a .gguf file, or a folder holding a
/// .gguf file and no config.json.
bool is_gguf_model(const std::filesystem::path& path);

/// Decodes the row of `t` held in `bytes` (t.row_bytes() of them) into `out`
/// (shape.back() values): float dtypes widened, ggml blocks dequantized.
void decode_stored_row(const TensorInfo& t, std::span<const std::byte> bytes, std::span<float> out);
/// Dequantizes one row of ggml blocks of `ggml_type` into `out`, bit for bit
/// as ggml's reference does; throws unless `bytes` is exactly such a row.
void dequantize_ggml_row(uint32_t ggml_type, std::span<const std::byte> bytes,
                         std::span<float> out);
/// Index of the first value of the ggml blocks `bytes` (`values` values of
/// `ggml_type`: a row, or rows of whole blocks back to back) that dequantizes
/// to NaN or infinity, or -1; reads the blocks' scales rather than
/// dequantizing. Throws unless `bytes` is exactly those blocks.
int64_t first_non_finite_ggml(uint32_t ggml_type, std::span<const std::byte> bytes, int64_t values);
/// The name of ggml type `ggml_type` ("Q4_K", ...).
std::string_view ggml_type_name(uint32_t ggml_type);

}  // namespace glmrt
