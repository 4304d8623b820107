#include <glmrt/base/atomic_file.h>
#include <glmrt/base/error.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/gguf_writer.h>
#include <glmrt/plugin/ggml_types.h>

#include "gguf_piece_writer.h"

#include <algorithm>
#include <cstring>
#include <span>

namespace glmrt::gguf {

namespace {

uint64_t padding_to(uint64_t size, uint32_t alignment) {
  return (alignment - size % alignment) % alignment;
}

// Filled tensor bytes go to the file in pieces of whole rows of about this
// size: one piece is written while the next is filled.
constexpr uint64_t kFillPieceBytes = 64 << 20;

}  // namespace

void append_u32(std::string& out, uint32_t v) {
  char bytes[4];
  std::memcpy(bytes, &v, sizeof v);  // x86-64 and the format are both little-endian
  out.append(bytes, sizeof bytes);
}

void append_u64(std::string& out, uint64_t v) {
  char bytes[8];
  std::memcpy(bytes, &v, sizeof v);
  out.append(bytes, sizeof bytes);
}

void append_string(std::string& out, std::string_view text) {
  append_u64(out, text.size());
  out += text;
}

namespace {
void append_array(std::string& out, const Array& array) {
  append_u32(out, static_cast<uint32_t>(array.element_type()));
  append_u64(out, array.size());
  if (array.element_type() == ValueType::string) {
    for (uint64_t i = 0; i < array.size(); ++i) append_string(out, array.string(i));
  } else if (array.element_type() == ValueType::array) {
    for (uint64_t i = 0; i < array.size(); ++i) append_array(out, array.array(i));
  } else {
    const auto packed = array.packed();
    out.append(reinterpret_cast<const char*>(packed.data()), packed.size());
  }
}
}  // namespace

void append_value(std::string& out, const Value& value) {
  if (value.type == ValueType::string) {
    append_string(out, value.text);
  } else if (value.type == ValueType::array) {
    append_array(out, value.array);
  } else {
    char bytes[8];
    std::memcpy(bytes, &value.bits, sizeof bytes);
    out.append(bytes, value_type_bytes(value.type));
  }
}

void append_pair(std::string& out, std::string_view key, const Value& value) {
  append_string(out, key);
  append_u32(out, static_cast<uint32_t>(value.type));
  append_value(out, value);
}

void append_tensor_info(std::string& out, std::string_view name, std::span<const int64_t> dims,
                        uint32_t type, uint64_t offset) {
  append_string(out, name);
  append_u32(out, static_cast<uint32_t>(dims.size()));
  for (int64_t d : dims) append_u64(out, static_cast<uint64_t>(d));
  append_u32(out, type);
  append_u64(out, offset);
}

void Writer::set(std::string key, Value value) {
  metadata_.add(std::move(key), std::move(value));
}

void Writer::add_tensor(std::string name, uint32_t type, std::vector<int64_t> dims,
                        std::string data) {
  const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(type);
  if (traits.name == nullptr) fail("GGUF tensor '{}': ggml type id {} is unknown", name, type);
  if (name.size() > kMaxTensorNameBytes)
    fail("GGUF tensor '{}': the name is longer than {} bytes", name, kMaxTensorNameBytes);
  if (dims.empty() || dims.size() > kMaxDims)
    fail("GGUF tensor '{}': {} dimensions, expected 1 to {}", name, dims.size(), kMaxDims);
  const int64_t row_bytes = plugin::ggml_row_bytes(type, dims[0]);
  if (row_bytes < 0)
    fail("GGUF tensor '{}': rows of {} values are not whole {} blocks of {}", name, dims[0],
         traits.name, traits.block_values);
  uint64_t bytes = static_cast<uint64_t>(row_bytes);
  for (size_t d = 1; d < dims.size(); ++d) {
    if (dims[d] < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(dims[d]), &bytes))
      fail("GGUF tensor '{}': dimension {} = {} is negative or too large", name, d, dims[d]);
  }
  if (!data.empty() && data.size() != bytes)
    fail("GGUF tensor '{}': {} bytes given, its shape and type take {}", name, data.size(), bytes);
  for (const Tensor& t : tensors_)
    if (t.name == name) fail("GGUF tensor '{}' added twice", name);
  tensors_.push_back({std::move(name), type, std::move(dims), bytes, std::move(data)});
}

uint32_t Writer::alignment() const {
  return metadata_.get_or<uint32_t>("general.alignment", kDefaultAlignment);
}

std::vector<uint64_t> Writer::offsets() const {
  std::vector<uint64_t> out;
  uint64_t at = 0;
  for (const Tensor& t : tensors_) {
    out.push_back(at);
    at += t.byte_size + padding_to(t.byte_size, alignment());
  }
  return out;
}

std::string Writer::header() const {
  const uint32_t align = alignment();
  if (align == 0 || (align & (align - 1)) != 0)
    fail("GGUF general.alignment {} is not a power of two", align);
  std::string out = "GGUF";
  append_u32(out, kMaxVersion);
  append_u64(out, tensors_.size());
  append_u64(out, metadata_.size());
  for (const auto& [key, value] : metadata_.entries()) append_pair(out, key, value);
  const std::vector<uint64_t> at = offsets();
  for (size_t i = 0; i < tensors_.size(); ++i)
    append_tensor_info(out, tensors_[i].name, tensors_[i].dims, tensors_[i].type, at[i]);
  out.append(padding_to(out.size(), align), '\0');
  return out;
}

std::string Writer::bytes() const {
  std::string out = header();
  for (const Tensor& t : tensors_) {
    if (t.data.size() != t.byte_size) fail("GGUF tensor '{}' has no data to write", t.name);
    out += t.data;
    out.append(padding_to(t.byte_size, alignment()), '\0');
  }
  return out;
}

void Writer::write(const std::filesystem::path& file, const TensorRows& fill) const {
  AtomicFile out(file);
  out.write(header());
  if (!fill) {
    for (const Tensor& t : tensors_) {
      if (t.data.size() != t.byte_size)
        fail("{}: GGUF tensor '{}' has no data to write", file, t.name);
      out.write(t.data);
      out.write(std::string(padding_to(t.byte_size, alignment()), '\0'));
    }
    out.commit();
    return;
  }
  // The disk takes a piece while the cores fill the next: written one after
  // the other, make-model's slices went at about half the disk's speed.
  PieceWriter writer(out);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    if (t.byte_size == 0) continue;  // an empty tensor: no rows, no padding
    const auto row_bytes = static_cast<uint64_t>(plugin::ggml_row_bytes(t.type, t.dims[0]));
    const auto rows = static_cast<int64_t>(t.byte_size / row_bytes);
    const auto rows_per_piece =
        static_cast<int64_t>(std::max<uint64_t>(1, kFillPieceBytes / row_bytes));
    for (int64_t first = 0; first < rows; first += rows_per_piece) {
      const int64_t count = std::min(rows_per_piece, rows - first);
      std::string& piece = writer.next_buffer();
      piece.resize(static_cast<size_t>(count) * row_bytes);
      fill(i, first, std::as_writable_bytes(std::span(piece.data(), piece.size())));
      if (first + count == rows) piece.append(padding_to(t.byte_size, alignment()), '\0');
      writer.submit();
    }
  }
  writer.finish();
  out.commit();
}

}  // namespace glmrt::gguf
