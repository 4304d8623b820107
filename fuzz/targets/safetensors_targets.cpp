// Safetensors files and model directories, read as TensorDirectory reads a
// checkpoint: headers validated on open, then tensor bytes read and decoded.
#include <glmrt/base/error.h>
#include <glmrt/model_files/safetensors.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace glmrt::fuzz {
namespace {

// Tensors above this are not read: the header checks alone decide about them,
// and reading megabytes per input would slow the search.
constexpr uint64_t kMaxReadBytes = 1 << 16;

// Separates the files of a model_dir input (see fuzz_model_dir).
constexpr std::string_view kFileSeparator = "\n%%%% ";

// Reads every small tensor, checking what TensorDirectory promises about it.
void read_tensors(const TensorDirectory& dir) {
  for (const TensorInfo& t : dir.tensors()) {
    expect(dir.find(t.name) == &t, "find() returns the listed tensor");
    expect(t.file_index >= 0 && static_cast<size_t>(t.file_index) < dir.files().size(),
           "file_index names one of files()");
    expect(t.byte_size == static_cast<uint64_t>(t.numel()) * dtype_size(t.dtype),
           "byte_size = numel x dtype size");
    if (t.byte_size > kMaxReadBytes) continue;
    std::vector<std::byte> raw(t.byte_size);
    dir.read_raw(t, raw);
    if (is_float_dtype(t.dtype)) {
      const std::vector<float> values = dir.read_f32(t);
      expect(values.size() == static_cast<size_t>(t.numel()), "read_f32 gives numel values");
    } else {
      try {
        dir.read_f32(t);
        expect(false, "read_f32 refuses a non-float dtype");
      } catch (const Error&) {  // expected
      }
    }
  }
}

// A file name the harness may create: [A-Za-z0-9._-], not "." or "..".
std::string safe_file_name(std::string_view name, size_t index) {
  const bool safe = !name.empty() && name.size() <= 64 && name != "." && name != ".." &&
                    std::all_of(name.begin(), name.end(), [](char c) {
                      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                             (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
                    });
  return safe ? std::string(name) : "file" + std::to_string(index);
}

}  // namespace

int fuzz_safetensors(Input input, const ScratchDir& scratch) {
  const auto file = ScratchDir::write(scratch.folder("st"), "model.safetensors", as_text(input));
  try {
    read_tensors(TensorDirectory::open_file(file));
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

// Input: the text of model.safetensors.index.json (none when empty), then any
// number of files, each introduced by "\n%%%% NAME\n":
//   {"weight_map": {"a": "s1.safetensors"}}
//   %%%% s1.safetensors
//   <bytes of the shard>
// An input starting with "%%%% " has no index.
int fuzz_model_dir(Input input, const ScratchDir& scratch) {
  const auto folder = scratch.fresh_folder("model");
  // The leading newline lets the first file start the input.
  std::string text(1, '\n');
  text += as_text(input);
  const std::vector<std::string_view> parts = split(text, kFileSeparator);
  const std::string_view index = parts[0].empty() ? parts[0] : parts[0].substr(1);
  if (!index.empty()) ScratchDir::write(folder, "model.safetensors.index.json", index);
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t end_of_name = std::min(parts[i].find('\n'), parts[i].size());
    const std::string_view bytes = parts[i].substr(std::min(end_of_name + 1, parts[i].size()));
    ScratchDir::write(folder, safe_file_name(parts[i].substr(0, end_of_name), i), bytes);
  }
  try {
    read_tensors(TensorDirectory::open(folder));
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

}  // namespace glmrt::fuzz
