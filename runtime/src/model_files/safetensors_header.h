// Parsing and validation of one safetensors file's header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include <glmrt/model_files/safetensors.h>

namespace glmrt::model_files {

/// Largest header accepted: real checkpoints need well under 1 MB, so a
/// bigger length means a corrupt file or a file of another format.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100ull << 20;

/// Most tensors one header may declare: a whole GLM-5 or DeepSeek-V3 in a
/// single file is ~100-250k (experts x projections x scales), so 2^20 is far
/// above any real checkpoint and refuses a header stuffed with dummy entries
/// before it costs more than a second and a few hundred MB of parse tree.
inline constexpr std::size_t kMaxSafetensorsTensors = std::size_t{1} << 20;

/// Reads and validates the header of the open safetensors file `file`: every
/// entry's dtype, shape and data_offsets, that the bytes lie inside the data
/// section, match shape x dtype size and overlap no other tensor. Returned
/// tensors carry absolute file offsets and `file_index`.
std::vector<TensorInfo> read_safetensors_header(int fd, const std::filesystem::path& file,
                                                int file_index);

/// The same for a header's JSON `text` (what follows the 8-byte length) of
/// a file of `size` bytes.
/// More than `max_tensors` entries are refused as soon as the parser meets
/// the first surplus one.
std::vector<TensorInfo> parse_safetensors_header(const std::string& text, uint64_t size,
                                                 const std::filesystem::path& file, int file_index,
                                                 std::size_t max_tensors = kMaxSafetensorsTensors);

}  // namespace glmrt::model_files
