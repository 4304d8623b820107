// A GGUF model as a TensorDirectory: its tensors under the Hugging Face names
// the model loads, with shapes in row-major order (ggml's dims reversed).
#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_files/file_io.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/plugin/ggml_types.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <system_error>

#include "dtype_conversion.h"
#include "ggml/ggml_blocks.h"
#include "gguf_tensor_names.h"

namespace glmrt {
namespace {

using model_files::GgufTensorRole;
using std::filesystem::path;

// Far above any model's routed experts (GLM-5: 256, Kimi-K2: 384); bounds the
// per-expert views a hostile header can ask for.
constexpr int64_t kMaxExperts = int64_t{1} << 16;

// The DType a ggml type is read as: the float ones as themselves, the
// quantized ones as GGML blocks; nullopt for types no weight is stored in.
std::optional<DType> dtype_of_ggml(uint32_t type) {
  switch (type) {
    case GLMRT_GGML_F32:
      return DType::F32;
    case GLMRT_GGML_F16:
      return DType::F16;
    case GLMRT_GGML_BF16:
      return DType::BF16;
    case GLMRT_GGML_F64:
      return DType::F64;
    default:
      if (plugin_support::ggml::dequantizes(type)) return DType::GGML;
      return std::nullopt;
  }
}

[[noreturn]] void fail_dims(const gguf::TensorInfo& t, const path& file,
                            std::string_view expected) {
  fail("GGUF tensor '{}' in {} has ggml dims [{}], expected {}", printable(t.name), file,
       fmt::join(t.dims, ", "), expected);
}

// The tensors `t` stands for in the model's names.
std::vector<TensorInfo> tensors_of(const gguf::TensorInfo& t, const path& file) {
  const auto name = model_files::hf_tensor_name(t.name);
  if (!name)
    fail(
        "GGUF tensor '{}' in {} is not one of the glm-dsa / deepseek2 / deepseek32 tensors glmrt "
        "loads (docs/gguf.md lists them)",
        printable(t.name), file);
  const auto dtype = dtype_of_ggml(t.type);
  if (!dtype)
    fail("GGUF tensor '{}' in {} is of ggml type {} ({}), which holds no weights glmrt reads",
         printable(t.name), file, t.type_name(), t.type);
  if (std::find(t.dims.begin(), t.dims.end(), 0) != t.dims.end())
    fail_dims(t, file, "no empty dimension: weights hold values");
  if (name->role == GgufTensorRole::experts && t.dims.size() == 3 && t.dims[2] > kMaxExperts)
    fail_dims(t, file, fmt::format("at most {} experts", kMaxExperts));
  TensorInfo out;
  out.name = name->hf_name;
  out.dtype = *dtype;
  out.ggml_type = t.type;
  out.file_index = t.file_index;
  out.offset = t.offset;
  out.byte_size = t.byte_size;
  const auto& d = t.dims;
  switch (name->role) {
    case GgufTensorRole::plain:
      if (d.size() == 1) {
        out.shape = {d[0]};
      } else if (d.size() == 2) {
        out.shape = {d[1], d[0]};
      } else {
        fail_dims(t, file, "1 or 2 of them");
      }
      return {out};
    case GgufTensorRole::key_absorb:  // [nope, kv_lora, H] -> [H * kv_lora, nope]
    case GgufTensorRole::value:       // [kv_lora, v, H] -> [H * v, kv_lora]
      if (d.size() != 3) fail_dims(t, file, "3 of them: [row, rows per head, heads]");
      out.shape = {d[2] * d[1], d[0]};
      return {out};
    case GgufTensorRole::experts: {
      if (d.size() != 3 || d[2] < 1) fail_dims(t, file, "3 of them: [in, out, experts]");
      const uint64_t slice = t.byte_size / static_cast<uint64_t>(d[2]);
      std::vector<TensorInfo> experts;
      for (int64_t e = 0; e < d[2]; ++e) {
        TensorInfo x = out;
        x.name = fmt::format(fmt::runtime(name->hf_name), e);
        x.shape = {d[1], d[0]};
        x.offset = t.offset + static_cast<uint64_t>(e) * slice;
        x.byte_size = slice;
        experts.push_back(std::move(x));
      }
      return experts;
    }
  }
  fail("GGUF tensor '{}': unknown role", printable(t.name));
}

// Each tensor's bytes are those of its shape in its type (the reader checked
// the whole tensor; this checks what the views and the row length make of it).
void check_bytes(const TensorInfo& t, const path& file) {
  const int64_t row = t.row_bytes();
  if (row < 0)
    fail("GGUF tensor for '{}' in {}: rows of {} values are not whole {} blocks", t.name, file,
         t.shape.back(), plugin::ggml_type_traits(t.ggml_type).name);
  if (static_cast<uint64_t>(row) * static_cast<uint64_t>(t.numel() / t.shape.back()) != t.byte_size)
    fail("GGUF tensor for '{}' in {}: {} bytes do not hold shape [{}] of {}", t.name, file,
         t.byte_size, fmt::join(t.shape, ", "), plugin::ggml_type_traits(t.ggml_type).name);
}

}  // namespace

bool is_gguf_model(const path& p) {
  if (p.extension() == ".gguf") return true;
  std::error_code ec;
  if (!std::filesystem::is_directory(p, ec) || std::filesystem::exists(p / "config.json", ec))
    return false;
  for (const auto& entry : std::filesystem::directory_iterator(p, ec))
    if (entry.path().extension() == ".gguf") return true;
  return false;
}

int64_t TensorInfo::row_bytes() const {
  const int64_t n = shape.empty() ? 1 : shape.back();
  if (dtype == DType::GGML) return plugin::ggml_row_bytes(ggml_type, n);
  return n * static_cast<int64_t>(dtype_size(dtype));
}

void dequantize_ggml_row(uint32_t ggml_type, std::span<const std::byte> bytes,
                         std::span<float> out) {
  if (static_cast<int64_t>(bytes.size()) != plugin::ggml_row_bytes(ggml_type, std::ssize(out)) ||
      !plugin_support::ggml::dequantize_row(ggml_type, bytes.data(), std::ssize(out), out.data()))
    fail("{} bytes are not a row of {} {} values", bytes.size(), out.size(),
         ggml_type_name(ggml_type));
}

int64_t first_non_finite_ggml(uint32_t ggml_type, std::span<const std::byte> bytes,
                              int64_t values) {
  const int64_t at = static_cast<int64_t>(bytes.size()) == plugin::ggml_row_bytes(ggml_type, values)
                         ? plugin_support::ggml::first_non_finite(ggml_type, bytes.data(), values)
                         : -2;
  if (at == -2)
    fail("{} bytes are not a row of {} {} values", bytes.size(), values, ggml_type_name(ggml_type));
  return at;
}

std::string_view ggml_type_name(uint32_t ggml_type) {
  const char* name = plugin::ggml_type_traits(ggml_type).name;
  return name ? name : "unknown ggml type";
}

void decode_stored_row(const TensorInfo& t, std::span<const std::byte> bytes,
                       std::span<float> out) {
  if (t.dtype != DType::GGML) return model_files::convert_to_f32(t.dtype, bytes, out);
  dequantize_ggml_row(t.ggml_type, bytes, out);
}

TensorDirectory TensorDirectory::open_gguf(const path& source) {
  const gguf::Model model = gguf::Model::open(source);
  TensorDirectory dir;
  dir.gguf_ = true;
  dir.source_ = source;
  dir.files_ = model.files();
  for (const path& file : dir.files_) dir.fds_.push_back(model_files::open_read_only(file));
  for (const gguf::TensorInfo& t : model.tensors()) {
    const path& file = dir.files_.at(t.file_index);
    for (TensorInfo& x : tensors_of(t, file)) {
      check_bytes(x, file);
      dir.tensors_.push_back(std::move(x));
    }
  }
  dir.index_by_name();
  return dir;
}

void TensorDirectory::read_ggml_f32(const TensorInfo& t, std::span<float> dst) const {
  if (dst.size() != static_cast<size_t>(t.numel()))
    fail("tensor '{}' in {}: destination holds {} floats, the tensor has {} elements", t.name,
         source_, dst.size(), t.numel());
  std::vector<std::byte> raw(t.byte_size);
  read_raw(t, raw);
  const auto cols = static_cast<size_t>(t.shape.back());
  const auto row = static_cast<size_t>(t.row_bytes());
  for (size_t r = 0; r * cols < dst.size(); ++r)
    decode_stored_row(t, std::span(raw).subspan(r * row, row), dst.subspan(r * cols, cols));
  for (size_t i = 0; i < dst.size(); ++i)
    if (!std::isfinite(dst[i]))
      fail(
          "tensor '{}' in {}: value {} (row {}, column {}) dequantizes to {}: weights must be "
          "finite",
          t.name, files_[t.file_index], i, i / cols, i % cols, dst[i]);
}

}  // namespace glmrt
