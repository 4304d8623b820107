// What rank 0 compares of every rank's copy of the model, besides config.json
// and the safetensors headers (the model id): the files' sizes and, for a
// container, the XXH3-64 its checksums.json lists for each. Both are cheap
// (no weight is read), so a rank whose copy came from another conversion
// (e.g. its experts' codes altered, headers and sizes unchanged) is refused
// at start, naming the file; `--verify` then checks on each rank that its
// files are the ones its list describes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace glmrt {

struct ManifestEntry {
  std::string file;  // a name in the model folder
  uint64_t bytes = 0;
  std::string xxh3;  // from checksums.json; empty for a folder without one
  bool operator==(const ManifestEntry&) const = default;
};

/// The entries of `model_dir`, sorted by file: checksums.json's when it has
/// one, else every *.safetensors file with its size.
std::vector<ManifestEntry> model_manifest(const std::filesystem::path& model_dir);

/// The first file where `theirs` differs from `ours`, said as "`F` is ...
/// there, ... on rank 0"; nothing when they are the same.
std::optional<std::string> manifest_difference(const std::vector<ManifestEntry>& ours,
                                               const std::vector<ManifestEntry>& theirs);

}  // namespace glmrt
