// GGUF files (llama.cpp's model format), single or split into shards
// (NAME-00001-of-00003.gguf ...): the metadata and the tensor infos, every
// count, offset, size, type and shape validated before use. Reading tensor
// bytes is up to the caller (through fd() or read_raw()); models open a GGUF
// through TensorDirectory::open_gguf (safetensors.h) and load_model_config.
#pragma once

#include <glmrt/model_files/gguf_metadata.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace glmrt::gguf {

/// Versions read: 2 and 3 (version 1, 2023's format, is refused).
inline constexpr uint32_t kMinVersion = 2;
inline constexpr uint32_t kMaxVersion = 3;
inline constexpr uint32_t kDefaultAlignment = 32;
/// ggml's GGML_MAX_DIMS.
inline constexpr uint32_t kMaxDims = 4;
/// ggml's GGML_MAX_NAME (64) less its NUL: llama.cpp refuses longer names.
inline constexpr size_t kMaxTensorNameBytes = 63;
/// The format's own bound on a key.
inline constexpr size_t kMaxKeyBytes = 65535;
/// Bounds that keep a hostile header from taking more memory than a real one
/// ever needs (the largest tokenizers take tens of MB): the metadata's bytes,
/// the count of keys, of tensors, and how deep arrays nest.
inline constexpr uint64_t kMaxMetadataBytes = uint64_t{256} << 20;
inline constexpr uint64_t kMaxKeys = uint64_t{1} << 20;
inline constexpr uint64_t kMaxTensors = uint64_t{1} << 20;
inline constexpr int kMaxArrayDepth = 8;

struct TensorInfo {
  std::string name;
  uint32_t type = 0;          // glmrt_ggml_type (glmrt/plugin/ggml_types.h)
  std::vector<int64_t> dims;  // ggml order: dims[0] is the row length (ne[0])
  int file_index = 0;         // into Model::files(): the shard holding it
  uint64_t offset = 0;        // absolute byte offset in that file
  uint64_t byte_size = 0;
  int64_t numel() const;
  std::string_view type_name() const;  // "Q4_K", "F32", ...
};

/// One GGUF file's header, validated.
struct FileHeader {
  std::filesystem::path file;
  uint32_t version = 0;
  uint32_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;  // where the aligned data section starts
  uint64_t file_size = 0;
  Metadata metadata;
  std::vector<TensorInfo> tensors;  // in file order, file_index as given
};

/// Reads and validates the header of the open file `fd` through bounded
/// reads (no count or length allocates before the file is known to hold it).
/// Throws glmrt::Error naming the file and the key or tensor at fault.
FileHeader read_file_header(int fd, const std::filesystem::path& file, int file_index = 0);

/// The split name of a shard: NAME-0000k-of-0000N.gguf (five digits each).
struct SplitName {
  std::string prefix;  // NAME
  int number = 0;      // k, from 1
  int count = 0;       // N
};
/// The parts of a shard's file name; nullopt for a name not in that form.
std::optional<SplitName> parse_split_name(std::string_view file_name);
/// "NAME-0000k-of-0000N.gguf".
std::string split_file_name(std::string_view prefix, int number, int count);

/// The files of the GGUF model `path` names (a .gguf file, a shard of a split
/// model, or a folder holding one model), in shard order, without reading
/// them: what copies, evictions and rank comparisons of the model cover.
std::vector<std::filesystem::path> model_file_paths(const std::filesystem::path& path);

/// A GGUF model: one file, or every shard of a split one.
class Model {
 public:
  /// Opens `path`: a .gguf file (a shard of a split model finds the others
  /// beside it), or a folder holding one model (a single file or one set of
  /// shards). Metadata comes from the first shard; tensors from all of them.
  static Model open(const std::filesystem::path& path);

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model();

  /// The shards in order (one entry for a single file).
  const std::vector<std::filesystem::path>& files() const { return files_; }
  const Metadata& metadata() const { return headers_.front().metadata; }
  const FileHeader& header(int file_index) const { return headers_.at(file_index); }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find(std::string_view name) const;
  /// Throws naming the tensor and the model when absent.
  const TensorInfo& at(std::string_view name) const;
  /// The read-only descriptor of files()[i] (O_CLOEXEC).
  int fd(int file_index) const { return fds_.at(file_index); }
  /// The raw bytes of `t` (dst.size() must equal t.byte_size).
  void read_raw(const TensorInfo& t, std::span<std::byte> dst) const;

 private:
  Model() = default;
  void close_all() noexcept;

  std::filesystem::path source_;  // what the user named: for messages
  std::vector<std::filesystem::path> files_;
  std::vector<int> fds_;
  std::vector<FileHeader> headers_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> by_name_;
};

}  // namespace glmrt::gguf
