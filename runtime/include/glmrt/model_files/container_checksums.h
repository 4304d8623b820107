// The checksums a converted container carries in checksums.json (XXH3-64 and
// size of every shard, written by glmrt convert) and their check: by
// `glmrt verify`, and on load by `run`/`validate --verify` or the profile's
// `memory.verify_checksums`.
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace glmrt {

/// Name of the checksum file in a converted folder.
inline constexpr const char* kChecksumsFile = "checksums.json";

/// XXH3-64 of a whole file, read in large blocks.
uint64_t hash_file(const std::filesystem::path& path);
/// 16 hex digits.
std::string hash_hex(uint64_t hash);

struct ChecksumEntry {
  std::string name;  // of the file in the container folder
  uint64_t bytes = 0;
  std::string xxh3;  // 16 hex digits
};

/// DIR/checksums.json; throws naming it when it is missing (DIR is no
/// container) or not of the form {"hash": "xxh3-64", "files": {name: {bytes, xxh3}}}.
std::vector<ChecksumEntry> read_container_checksums(const std::filesystem::path& dir);

/// Throws naming the file when it is missing or its size is not the listed one.
void require_listed_size(const std::filesystem::path& dir, const ChecksumEntry& entry);
/// Throws naming the file when `found` (its XXH3-64) is not the listed one.
void require_listed_hash(const std::filesystem::path& dir, const ChecksumEntry& entry,
                         uint64_t found);
/// Throws naming the file when one of `tensors`' files has no entry.
void require_every_file_listed(const std::filesystem::path& dir,
                               const std::vector<ChecksumEntry>& entries,
                               const TensorDirectory& tensors);

struct ChecksumReport {
  int files = 0;
  uint64_t bytes = 0;
  double seconds = 0;
};

/// Reads every file checksums.json lists and checks its size and XXH3-64
/// (before any header is trusted), then that every file holding the
/// container's tensors is listed.
ChecksumReport check_container_checksums(const std::filesystem::path& dir);

}  // namespace glmrt
