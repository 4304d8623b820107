// model.safetensors.index.json: which shard file holds each tensor.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace glmrt::model_files {

struct ShardIndex {
  std::filesystem::path file;                 // the index file itself
  std::vector<std::filesystem::path> shards;  // distinct shard paths, in first-mention order
  struct Entry {
    std::string tensor;
    size_t shard;  // into shards
  };
  std::vector<Entry> weight_map;
};

/// Reads `index_file`; shard names are resolved against its directory and may
/// not escape it (absolute paths and ".." are refused, naming the tensor).
ShardIndex read_shard_index(const std::filesystem::path& index_file);

}  // namespace glmrt::model_files
