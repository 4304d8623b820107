// GGUF files, single or split, read as gguf::Model reads them: the header
// validated on open, then every accessor driven and every small tensor read.
#include <glmrt/base/error.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/plugin/ggml_types.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace glmrt::fuzz {
namespace {

constexpr uint64_t kMaxGgufReadBytes = 1 << 16;
// Separates the shards of a split input (see fuzz_gguf).
constexpr std::string_view kGgufFileSeparator = "\n%%%% ";

// Every typed accessor on every key: each either answers or refuses with
// glmrt::Error, never anything else.
void read_every_key(const gguf::Metadata& metadata) {
  const auto attempt = [](const auto& read) {
    try {
      read();
    } catch (const Error& e) {
      refused(e);
    }
  };
  for (const auto& entry : metadata.entries()) {
    // Named, not a structured binding: lambdas cannot capture those before clang 16.
    const std::string& key = entry.first;
    expect(metadata.find(key) == &entry.second, "find() returns the listed value");
    attempt([&] { metadata.get<uint32_t>(key); });
    attempt([&] { metadata.get<int64_t>(key); });
    attempt([&] { metadata.get<float>(key); });
    attempt([&] { metadata.get<bool>(key); });
    attempt([&] { metadata.get<std::string_view>(key); });
    attempt([&] { metadata.get<std::vector<int32_t>>(key); });
    attempt([&] { metadata.get<std::vector<double>>(key); });
    attempt([&] { metadata.get<std::vector<std::string_view>>(key); });
    attempt([&] { metadata.get<std::vector<bool>>(key); });
  }
}

void check_tensors(const gguf::Model& model) {
  for (const gguf::TensorInfo& t : model.tensors()) {
    expect(model.find(t.name) == &t, "find() returns the listed tensor");
    expect(t.file_index >= 0 && static_cast<size_t>(t.file_index) < model.files().size(),
           "file_index names one of files()");
    const gguf::FileHeader& header = model.header(t.file_index);
    expect(
        t.offset >= header.data_offset && (t.offset - header.data_offset) % header.alignment == 0,
        "a tensor starts in the data section, aligned");
    expect(t.byte_size <= header.file_size && t.offset <= header.file_size - t.byte_size,
           "a tensor ends inside its file");
    expect(!t.dims.empty() && t.dims.size() <= gguf::kMaxDims, "1 to 4 dimensions");
    const int64_t row_bytes = plugin::ggml_row_bytes(t.type, t.dims[0]);
    expect(row_bytes >= 0, "rows are whole blocks of a known type");
    if (t.dims[0] > 0)
      expect(t.byte_size ==
                 static_cast<uint64_t>(row_bytes) * static_cast<uint64_t>(t.numel() / t.dims[0]),
             "byte_size = rows x row bytes");
    if (t.byte_size > kMaxGgufReadBytes) continue;
    std::vector<std::byte> raw(t.byte_size);
    model.read_raw(t, raw);
  }
}

}  // namespace

// Input: one GGUF file, or, when it starts with "%%%% NAME\n", several files
// each introduced by "\n%%%% NAME\n" (a split model: NAME-00001-of-00002.gguf
// ...) opened through their folder.
int fuzz_gguf(Input input, const ScratchDir& scratch) {
  const auto folder = scratch.fresh_folder("gguf");
  std::filesystem::path open;
  const std::string_view text = as_text(input);
  if (text.starts_with(kGgufFileSeparator.substr(1))) {
    const std::string with_newline = "\n" + std::string(text);
    const std::vector<std::string_view> parts = split(with_newline, kGgufFileSeparator);
    for (size_t i = 1; i < parts.size(); ++i) {
      const size_t end_of_name = std::min(parts[i].find('\n'), parts[i].size());
      std::string name(parts[i].substr(0, end_of_name));
      const bool safe = !name.empty() && name.size() <= 64 && name != "." && name != ".." &&
                        std::all_of(name.begin(), name.end(), [](char c) {
                          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
                        });
      if (!safe) name = "file" + std::to_string(i) + ".gguf";
      ScratchDir::write(folder, name, parts[i].substr(std::min(end_of_name + 1, parts[i].size())));
    }
    open = folder;
  } else {
    open = ScratchDir::write(folder, "model.gguf", text);
  }
  try {
    const gguf::Model model = gguf::Model::open(open);
    expect(!model.files().empty(), "a model has a file");
    read_every_key(model.metadata());
    check_tensors(model);
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

}  // namespace glmrt::fuzz
