#include "safetensors_index.h"

#include <map>
#include <nlohmann/json.hpp>

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>

namespace glmrt::model_files {

namespace {

using nlohmann::json;
using std::filesystem::path;

json read_json_object(const path& file) {
  const std::string text = read_input_file(file, input_kinds::shard_index);
  require_json_nesting_within(text, file.string());
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e400
    fail("{} is not valid JSON: {}", file, printable(e.what()));
  }
  if (!document.is_object())
    fail("{}: expected a JSON object, found {}", file, document.type_name());
  return document;
}

// A shard name is a path relative to the model directory that stays inside it.
path checked_shard_path(const std::string& shard, const path& index_file,
                        const std::string& tensor) {
  const path relative(shard);
  bool escapes = relative.empty() || relative.is_absolute() || relative.has_root_name();
  for (const auto& part : relative) escapes = escapes || part == "..";
  if (escapes) {
    fail(
        "{}: weight_map entry '{}' names shard '{}', which is not a file name inside the model "
        "directory",
        index_file, tensor, shard);
  }
  return index_file.parent_path() / relative;
}

}  // namespace

ShardIndex read_shard_index(const path& index_file) {
  const json document = read_json_object(index_file);
  const auto map_it = document.find("weight_map");
  if (map_it == document.end()) fail("{}: missing key 'weight_map'", index_file);
  if (!map_it->is_object()) {
    fail("{}: 'weight_map' must be an object mapping tensor names to shard files, found {}",
         index_file, map_it->type_name());
  }
  ShardIndex index;
  index.file = index_file;
  std::map<std::string, size_t> shard_numbers;
  for (const auto& [tensor, shard] : map_it->items()) {
    if (!shard.is_string()) {
      fail("{}: weight_map entry '{}' must be a shard file name, found {}", index_file, tensor,
           shard.dump());
    }
    const std::string& name = shard.get_ref<const std::string&>();
    auto [it, inserted] = shard_numbers.try_emplace(name, index.shards.size());
    if (inserted) index.shards.push_back(checked_shard_path(name, index_file, tensor));
    index.weight_map.push_back({tensor, it->second});
  }
  if (index.weight_map.empty()) fail("{}: 'weight_map' lists no tensors", index_file);
  return index;
}

}  // namespace glmrt::model_files
