#include <glmrt/model_files/file_io.h>

#include <glmrt/base/input_file.h>
#include <glmrt/history/model_id.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <span>

namespace glmrt {
namespace {

uint64_t id_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The 8-byte length and the JSON header of one safetensors file.
std::string raw_header(const std::filesystem::path& file) {
  const int fd = model_files::open_read_only(file);
  std::unique_ptr<int, void (*)(int*)> guard(new int(fd), [](int* p) {
    model_files::close_fd(*p);
    delete p;
  });
  std::array<std::byte, 8> length_bytes;
  model_files::pread_exact(fd, 0, length_bytes, file, "the header length");
  uint64_t length = 0;
  std::memcpy(&length, length_bytes.data(), 8);  // little-endian hosts only (as the loader)
  // TensorDirectory validated the header already; its length is sane.
  std::string header(8 + length, '\0');
  std::memcpy(header.data(), length_bytes.data(), 8);
  model_files::pread_exact(fd, 8, std::as_writable_bytes(std::span(header).subspan(8)), file,
                           "the header");
  return header;
}

}  // namespace

void ContentHash::update(std::string_view bytes) {
  for (char c : bytes) {
    const auto byte = static_cast<uint8_t>(c);
    a_ = (a_ ^ byte) * 0x100000001b3ull;
    b_ = id_mix(b_ + byte + 0x9e3779b97f4a7c15ull);
  }
  length_ += bytes.size();
}

std::string ContentHash::hex() const {
  return fmt::format("{:016x}{:016x}", id_mix(a_ ^ length_), b_);
}

namespace {

// A GGUF's metadata and tensor infos: every byte before its first tensor.
std::string gguf_header(const TensorDirectory& tensors, int file_index) {
  const std::filesystem::path& file = tensors.files().at(file_index);
  uint64_t end = model_files::file_size(tensors.fd(file_index), file);
  for (const TensorInfo& t : tensors.tensors())
    if (t.file_index == file_index) end = std::min(end, t.offset);
  std::string header(end, '\0');
  model_files::pread_exact(tensors.fd(file_index), 0, std::as_writable_bytes(std::span(header)),
                           file, "the GGUF header");
  return header;
}

std::string gguf_model_id(const TensorDirectory& tensors) {
  ContentHash hash;
  for (size_t i = 0; i < tensors.files().size(); ++i) {
    const std::string header = gguf_header(tensors, static_cast<int>(i));
    hash.update(fmt::format("{} {}\n", tensors.files()[i].filename().string(), header.size()));
    hash.update(header);
  }
  return hash.hex();
}

}  // namespace

std::string model_id(const std::filesystem::path& model_dir, const TensorDirectory& tensors) {
  if (tensors.is_gguf()) return gguf_model_id(tensors);
  ContentHash hash;
  const std::string config = read_input_file(model_dir / "config.json", input_kinds::model_config);
  // Each part is preceded by its length, so moving bytes between parts
  // changes the id.
  hash.update(fmt::format("config.json {}\n", config.size()));
  hash.update(config);
  for (const auto& file : tensors.files()) {
    const std::string header = raw_header(file);
    hash.update(fmt::format("{} {}\n", file.filename().string(), header.size()));
    hash.update(header);
  }
  return hash.hex();
}

}  // namespace glmrt
