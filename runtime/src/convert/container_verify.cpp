#include <glmrt/base/error.h>
#include <glmrt/convert/container_verify.h>
#include <glmrt/convert/convert.h>
#include <glmrt/convert/streamed_file_writer.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "../model_files/file_io.h"

namespace glmrt {

namespace fs = std::filesystem;

VerifyResult verify_container(const fs::path& dir) {
  const auto start = std::chrono::steady_clock::now();
  VerifyResult r;
  const fs::path list = dir / kChecksumsFile;
  if (!fs::exists(list))
    fail("{} is missing: {} is not a container written by glmrt convert (or not a finished one)",
         list, dir);
  nlohmann::json checksums;
  try {
    checksums = nlohmann::json::parse(model_files::read_whole_file(list));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", list, e.what());
  }
  if (!checksums.contains("files") || !checksums["files"].is_object() ||
      checksums.value("hash", "") != "xxh3-64")
    fail("{}: expected {{\"hash\": \"xxh3-64\", \"files\": {{name: {{bytes, xxh3}}}}}}", list);
  for (const auto& [name, entry] : checksums["files"].items()) {
    const fs::path file = dir / name;
    std::error_code ec;
    if (!fs::exists(file, ec)) fail("{} is missing (listed in {})", file, list);
    const uint64_t bytes = entry.at("bytes").get<uint64_t>();
    const uint64_t size = fs::file_size(file, ec);
    if (size != bytes)
      fail("{} holds {} bytes, {} lists {}: the file is {}", file, size, list, bytes,
           size < bytes ? "truncated" : "longer than written");
    const std::string expected = entry.at("xxh3").get<std::string>();
    const std::string found = hash_hex(hash_file(file));
    if (found != expected)
      fail("{}: checksum {} differs from {} in {}: the file is damaged", file, found, expected,
           list);
    ++r.files;
    r.bytes += bytes;
  }
  // Headers, offsets against file sizes and format stamps are checked on opening.
  const TensorDirectory tensors = TensorDirectory::open(dir);
  for (const auto& f : tensors.files())
    if (!checksums["files"].contains(f.filename().string()))
      fail("{} holds tensors but has no checksum in {}", f, list);
  r.tensors = static_cast<int>(tensors.tensors().size());
  const ModelConfig config = load_model_config(dir, tensors);
  plan_expert_layouts(config, tensors,
                      config.num_hidden_layers + (config.num_nextn_predict_layers > 0 ? 1 : 0));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace glmrt
