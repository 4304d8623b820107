#include "config_layer_kinds.h"

#include <algorithm>

#include <glmrt/base/error.h>

namespace glmrt::model_files {

namespace {

using nlohmann::json;

const json& require_per_layer_array(const ConfigFields& fields, const json& value,
                                    std::string_view key, int num_layers) {
  if (!value.is_array() || value.size() != static_cast<size_t>(num_layers)) {
    fail(
        "{}: key '{}' must be an array with one entry per layer (num_hidden_layers = {}), found {}",
        fields.file(), key, num_layers, value.dump());
  }
  return value;
}

std::vector<MlpKind> mlp_kinds_from_list(const ConfigFields& fields, const json& list,
                                         int num_layers) {
  constexpr std::string_view key = "mlp_layer_types";
  std::vector<MlpKind> kinds;
  for (const json& item : require_per_layer_array(fields, list, key, num_layers)) {
    const std::string kind = fields.as_string(item, key);
    if (kind == "dense") {
      kinds.push_back(MlpKind::dense);
    } else if (kind == "sparse") {
      kinds.push_back(MlpKind::sparse);
    } else {
      fail("{}: key '{}' entry {} is '{}', expected \"dense\" or \"sparse\"", fields.file(), key,
           kinds.size(), kind);
    }
  }
  return kinds;
}

std::vector<IndexerKind> indexer_kinds_from_list(const ConfigFields& fields, const json& list,
                                                 int num_layers) {
  constexpr std::string_view key = "indexer_types";
  std::vector<IndexerKind> kinds;
  for (const json& item : require_per_layer_array(fields, list, key, num_layers)) {
    const std::string kind = fields.as_string(item, key);
    if (kind == "full") {
      kinds.push_back(IndexerKind::full);
    } else if (kind == "shared") {
      kinds.push_back(IndexerKind::shared);
    } else {
      fail("{}: key '{}' entry {} is '{}', expected \"full\" or \"shared\"", fields.file(), key,
           kinds.size(), kind);
    }
  }
  return kinds;
}

std::vector<IndexerKind> indexer_kinds_from_pattern(const ConfigFields& fields, const json& value,
                                                    int num_layers) {
  constexpr std::string_view key = "index_topk_pattern";
  const std::string pattern = fields.as_string(value, key);
  if (pattern.size() != static_cast<size_t>(num_layers)) {
    fail("{}: key '{}' is \"{}\" ({} letters), expected one letter per layer ({})", fields.file(),
         key, pattern, pattern.size(), num_layers);
  }
  std::vector<IndexerKind> kinds;
  for (char letter : pattern) {
    if (letter != 'F' && letter != 'S') {
      fail("{}: key '{}' letter {} is '{}', expected 'F' (full) or 'S' (shared)", fields.file(),
           key, kinds.size(), letter);
    }
    kinds.push_back(letter == 'F' ? IndexerKind::full : IndexerKind::shared);
  }
  return kinds;
}

std::vector<IndexerKind> indexer_kinds_from_frequency(const ConfigFields& fields, int num_layers) {
  const int freq = fields.optional_int("index_topk_freq", 1);
  const int offset = fields.optional_int("index_skip_topk_offset", 2);
  if (freq <= 0) fail("{}: key 'index_topk_freq' must be positive, found {}", fields.file(), freq);
  if (offset < 0) {
    fail("{}: key 'index_skip_topk_offset' must not be negative, found {}", fields.file(), offset);
  }
  std::vector<IndexerKind> kinds;
  for (int i = 0; i < num_layers; ++i) {
    const bool full = std::max(i - offset + 1, 0) % freq == 0;
    kinds.push_back(full ? IndexerKind::full : IndexerKind::shared);
  }
  return kinds;
}

}  // namespace

std::vector<MlpKind> read_mlp_layer_types(const ConfigFields& fields, int num_layers) {
  if (const json* list = fields.optional("mlp_layer_types")) {
    return mlp_kinds_from_list(fields, *list, num_layers);
  }
  const int first_dense = fields.optional_int("first_k_dense_replace", 0);
  const int moe_freq = fields.optional_int("moe_layer_freq", 1);
  if (first_dense < 0 || first_dense > num_layers) {
    fail("{}: key 'first_k_dense_replace' is {}, expected 0..num_hidden_layers ({})", fields.file(),
         first_dense, num_layers);
  }
  if (moe_freq <= 0) {
    fail("{}: key 'moe_layer_freq' must be positive, found {}", fields.file(), moe_freq);
  }
  std::vector<MlpKind> kinds;
  for (int i = 0; i < num_layers; ++i) {
    const bool sparse = i >= first_dense && i % moe_freq == 0;
    kinds.push_back(sparse ? MlpKind::sparse : MlpKind::dense);
  }
  return kinds;
}

std::vector<IndexerKind> read_indexer_types(const ConfigFields& fields, int num_layers) {
  std::vector<IndexerKind> kinds;
  std::string_view source;
  if (const json* list = fields.optional("indexer_types")) {
    kinds = indexer_kinds_from_list(fields, *list, num_layers);
    source = "indexer_types";
  } else if (const json* pattern = fields.optional("index_topk_pattern")) {
    kinds = indexer_kinds_from_pattern(fields, *pattern, num_layers);
    source = "index_topk_pattern";
  } else {
    kinds = indexer_kinds_from_frequency(fields, num_layers);
    source = "index_topk_freq/index_skip_topk_offset";
  }
  if (!kinds.empty() && kinds.front() == IndexerKind::shared) {
    fail(
        "{}: key '{}' makes layer 0's indexer shared, but a shared indexer reuses the previous "
        "layer's selection and layer 0 has none",
        fields.file(), source);
  }
  return kinds;
}

}  // namespace glmrt::model_files
