#include "safetensors_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace glmrt::test {
namespace {

uint16_t f32_to_bf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest, ties to even
  return static_cast<uint16_t>(bits >> 16);
}

float bf16_to_f32(uint16_t half) {
  return std::bit_cast<float>(static_cast<uint32_t>(half) << 16);
}

// Rounds `mantissa >> shift` to nearest, ties to even.
uint32_t shift_rounded(uint32_t mantissa, int shift) {
  const uint32_t kept = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  return kept + ((rest > halfway || (rest == halfway && (kept & 1))) ? 1 : 0);
}

uint16_t f32_to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000;
  const int biased = static_cast<int>((bits >> 23) & 0xff);
  const uint32_t mantissa = bits & 0x7fffff;
  if (biased == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mantissa ? 0x200 : 0));
  const int exponent = biased - 127 + 15;
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exponent <= 0) {  // subnormal half: units of 2^-24
    if (exponent < -10) return static_cast<uint16_t>(sign);
    return static_cast<uint16_t>(sign | shift_rounded(mantissa | 0x800000, 14 - exponent));
  }
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  const uint32_t packed = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fff;
  const bool up = rest > 0x1000 || (rest == 0x1000 && (packed & 1));
  return static_cast<uint16_t>(sign | (packed + (up ? 1 : 0)));
}

float f16_to_f32(uint16_t half) {
  const float sign = (half & 0x8000) ? -1.f : 1.f;
  const int exponent = (half >> 10) & 0x1f;
  const int mantissa = half & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) return mantissa ? std::nanf("") : sign * INFINITY;
  return sign * std::ldexp(static_cast<float>(1024 + mantissa), exponent - 25);
}

void append_le16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8));
}

std::string shard_name(int index, int count) {
  return fmt::format("model-{:05d}-of-{:05d}.safetensors", index + 1, count);
}

}  // namespace

std::string_view stored_dtype_name(StoredDType dtype) {
  switch (dtype) {
    case StoredDType::f32:
      return "F32";
    case StoredDType::bf16:
      return "BF16";
    case StoredDType::f16:
      return "F16";
    case StoredDType::u8:
      return "U8";
    case StoredDType::f8_e4m3:
      return "F8_E4M3";
  }
  throw std::logic_error("unknown StoredDType");
}

size_t stored_dtype_size(StoredDType dtype) {
  switch (dtype) {
    case StoredDType::f32:
      return 4;
    case StoredDType::bf16:
    case StoredDType::f16:
      return 2;
    case StoredDType::u8:
    case StoredDType::f8_e4m3:
      return 1;
  }
  throw std::logic_error("unknown StoredDType");
}

float round_to_stored(StoredDType dtype, float value) {
  switch (dtype) {
    case StoredDType::f32:
      return value;
    case StoredDType::bf16:
      return bf16_to_f32(f32_to_bf16(value));
    case StoredDType::f16:
      return f16_to_f32(f32_to_f16(value));
    case StoredDType::u8:
    case StoredDType::f8_e4m3:
      return static_cast<float>(static_cast<uint8_t>(value));
  }
  throw std::logic_error("unknown StoredDType");
}

void round_tensor_to_stored(HostTensor& tensor) {
  for (float& v : tensor.values) v = round_to_stored(tensor.dtype, v);
}

std::string encode_tensor(const HostTensor& tensor) {
  if (static_cast<int64_t>(tensor.values.size()) != tensor.numel())
    throw std::invalid_argument(fmt::format("tensor {}: {} values for shape of {} elements",
                                            tensor.name, tensor.values.size(), tensor.numel()));
  std::string out;
  out.reserve(tensor.values.size() * stored_dtype_size(tensor.dtype));
  for (float v : tensor.values) {
    switch (tensor.dtype) {
      case StoredDType::f32: {
        const uint32_t bits = std::bit_cast<uint32_t>(v);
        for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
        break;
      }
      case StoredDType::bf16:
        append_le16(out, f32_to_bf16(v));
        break;
      case StoredDType::f16:
        append_le16(out, f32_to_f16(v));
        break;
      case StoredDType::u8:
      case StoredDType::f8_e4m3:
        out.push_back(static_cast<char>(static_cast<uint8_t>(v)));
        break;
    }
  }
  return out;
}

void write_file_atomically(const std::filesystem::path& file, std::string_view text) {
  const std::filesystem::path temp = file.string() + ".partial";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write " + temp.string());
  }
  std::filesystem::rename(temp, file);
}

uint64_t stored_bytes(const HostTensor& tensor) {
  return static_cast<uint64_t>(tensor.numel()) * stored_dtype_size(tensor.dtype);
}

void write_safetensors_file(const std::filesystem::path& file, const TensorList& tensors,
                            const FileLayout& layout) {
  if (!layout.offsets.empty() && layout.offsets.size() != tensors.size())
    throw std::invalid_argument(fmt::format("{}: {} offsets for {} tensors", file.string(),
                                            layout.offsets.size(), tensors.size()));
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = {{"format", "pt"}};
  for (const auto& [key, value] : layout.metadata) header["__metadata__"][key] = value;
  std::string data;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const HostTensor& t = tensors[i];
    const std::string bytes = encode_tensor(t);
    const uint64_t at = layout.offsets.empty() ? data.size() : layout.offsets[i];
    if (at > data.size()) data.resize(at, '\0');  // a gap
    if (data.size() < at + bytes.size()) data.resize(at + bytes.size(), '\0');
    data.replace(at, bytes.size(), bytes);
    header[t.name] = {{"dtype", stored_dtype_name(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {at, at + bytes.size()}}};
  }
  std::string text = header.dump();
  const uint64_t a = std::max<uint64_t>(layout.data_alignment, 1);
  text.append((a - (8 + text.size()) % a) % a, ' ');  // the data starts aligned
  std::string out(8, '\0');
  const uint64_t length = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  out += text;
  out += data;
  write_file_atomically(file, out);
}

void write_safetensors_checkpoint(const std::filesystem::path& dir, const TensorList& tensors,
                                  int shards) {
  if (shards < 1) throw std::invalid_argument("shards must be at least 1");
  std::filesystem::create_directories(dir);
  if (shards == 1) {
    write_safetensors_file(dir / "model.safetensors", tensors);
    return;
  }
  uint64_t total = 0;
  for (const HostTensor& t : tensors) total += t.numel() * stored_dtype_size(t.dtype);
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  std::vector<TensorList> parts(shards);
  uint64_t written = 0;
  for (const HostTensor& t : tensors) {
    // Tensor goes to the shard its starting byte falls in.
    const int shard = static_cast<int>(std::min<uint64_t>(written * shards / total, shards - 1));
    parts[shard].push_back(t);
    weight_map[t.name] = shard_name(shard, shards);
    written += t.numel() * stored_dtype_size(t.dtype);
  }
  for (int i = 0; i < shards; ++i) write_safetensors_file(dir / shard_name(i, shards), parts[i]);
  nlohmann::ordered_json index = {{"metadata", {{"total_size", total}}},
                                  {"weight_map", weight_map}};
  write_file_atomically(dir / "model.safetensors.index.json", index.dump(2));
}

const HostTensor* find_tensor(const TensorList& tensors, std::string_view name) {
  for (const HostTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

HostTensor* find_tensor(TensorList& tensors, std::string_view name) {
  for (HostTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

bool erase_tensor(TensorList& tensors, std::string_view name) {
  const auto it = std::find_if(tensors.begin(), tensors.end(),
                               [&](const HostTensor& t) { return t.name == name; });
  if (it == tensors.end()) return false;
  tensors.erase(it);
  return true;
}

}  // namespace glmrt::test
