#include "gguf_from_checkpoint.h"

#include <glmrt/model_files/gguf_from_hf.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/plugin/ggml_types.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace glmrt::test {
namespace {

using gguf::Value;
using json = nlohmann::ordered_json;

uint32_t ggml_type_of(DType d) {
  if (d == DType::F32) return GLMRT_GGML_F32;
  if (d == DType::BF16) return GLMRT_GGML_BF16;
  if (d == DType::F16) return GLMRT_GGML_F16;
  throw std::runtime_error(fmt::format("no ggml type for {}", dtype_name(d)));
}

std::string read_bytes(const TensorDirectory& dir, const TensorInfo& t) {
  std::string bytes(t.byte_size, '\0');
  dir.read_raw(t, std::as_writable_bytes(std::span(bytes)));
  return bytes;
}

// Keys and tensors go through the edits on their way to the file(s).
class EditedWriter {
 public:
  explicit EditedWriter(const GgufEdits& edits) : edits_(edits) {}
  void set(std::string key, Value value) {
    if (edits_.key && !edits_.key(key, value)) return;
    keys_.emplace_back(std::move(key), std::move(value));
  }
  void add_tensor(std::string name, uint32_t type, std::vector<int64_t> dims, std::string data) {
    if (edits_.tensor) edits_.tensor(name, type, dims);
    tensors_.push_back({std::move(name), type, std::move(dims), 0, std::move(data)});
  }
  // One file, or `shards` as llama.cpp's gguf-split writes them: the
  // metadata in the first, split.no / split.count / split.tensors.count in each.
  void write(const std::filesystem::path& file, int shards) const {
    if (shards == 1) {
      gguf::Writer w;
      for (const auto& [key, value] : keys_) w.set(key, value);
      for (const auto& t : tensors_) w.add_tensor(t.name, t.type, t.dims, t.data);
      if (edits_.extra) edits_.extra(w);
      return w.write(file);
    }
    const std::string stem = file.stem().string();
    const size_t per_shard = (tensors_.size() + shards - 1) / shards;
    for (int k = 0; k < shards; ++k) {
      gguf::Writer w;
      if (k == 0)
        for (const auto& [key, value] : keys_) w.set(key, value);
      w.set("split.no", Value::u16(static_cast<uint16_t>(k)));
      w.set("split.count", Value::u16(static_cast<uint16_t>(shards)));
      w.set("split.tensors.count", Value::i32(static_cast<int32_t>(tensors_.size())));
      for (size_t i = k * per_shard; i < std::min(tensors_.size(), (k + 1) * per_shard); ++i)
        w.add_tensor(tensors_[i].name, tensors_[i].type, tensors_[i].dims, tensors_[i].data);
      w.write(file.parent_path() / fmt::format("{}-{:05}-of-{:05}.gguf", stem, k + 1, shards));
    }
  }

 private:
  const GgufEdits& edits_;
  std::vector<std::pair<std::string, Value>> keys_;
  std::vector<gguf::Writer::Tensor> tensors_;
};

// kv_b_proj [H * (nope + v), kv_lora] -> attn_k_b ggml [nope, kv_lora, H]
// (numpy [H, kv_lora, nope]) and attn_v_b ggml [kv_lora, v, H].
void add_kv_b(EditedWriter& w, const TensorDirectory& dir, const TensorInfo& t, int layer,
              const json& c) {
  const int64_t H = c["num_attention_heads"], L = c["kv_lora_rank"];
  const int64_t nope = c["qk_nope_head_dim"], v = c["v_head_dim"];
  const size_t e = dtype_size(t.dtype);
  const std::string src = read_bytes(dir, t);
  std::string k(static_cast<size_t>(H * L * nope) * e, '\0'),
      vb(static_cast<size_t>(H * v * L) * e, '\0');
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t n = 0; n < nope; ++n)
      for (int64_t l = 0; l < L; ++l)
        std::memcpy(&k[static_cast<size_t>((h * L + l) * nope + n) * e],
                    &src[static_cast<size_t>((h * (nope + v) + n) * L + l) * e], e);
    std::memcpy(&vb[static_cast<size_t>(h * v * L) * e],
                &src[static_cast<size_t>((h * (nope + v) + nope) * L) * e],
                static_cast<size_t>(v * L) * e);
  }
  const uint32_t type = ggml_type_of(t.dtype);
  w.add_tensor(gguf::key_b_tensor_name(layer), type, {nope, L, H}, k);
  w.add_tensor(gguf::value_b_tensor_name(layer), type, {L, v, H}, vb);
}

// The number at the start of `text` and what follows its dot ("12.rest" -> 12, "rest").
// Parsed by hand: GCC 12's std::regex trips -Werror=maybe-uninitialized in the sanitizer build.
std::optional<std::pair<int, std::string>> number_then(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 6 || digits >= text.size() || text[digits] != '.')
    return std::nullopt;
  return std::pair{std::stoi(std::string(text.substr(0, digits))),
                   std::string(text.substr(digits + 1))};
}

// (layer, suffix) of "model.layers.L.<suffix>".
std::optional<std::pair<int, std::string>> layer_of(std::string_view name) {
  constexpr std::string_view kLayers = "model.layers.";
  if (!name.starts_with(kLayers)) return std::nullopt;
  return number_then(name.substr(kLayers.size()));
}

// (expert, "gate" | "up" | "down") of the suffix "mlp.experts.E.<kind>_proj.weight".
std::optional<std::pair<int, std::string>> expert_of(std::string_view suffix) {
  constexpr std::string_view kExperts = "mlp.experts.", kTail = "_proj.weight";
  if (!suffix.starts_with(kExperts)) return std::nullopt;
  auto expert = number_then(suffix.substr(kExperts.size()));
  if (!expert || !std::string_view(expert->second).ends_with(kTail)) return std::nullopt;
  expert->second.resize(expert->second.size() - kTail.size());
  if (expert->second != "gate" && expert->second != "up" && expert->second != "down")
    return std::nullopt;
  return expert;
}

}  // namespace

void write_gguf_from_checkpoint(const std::filesystem::path& checkpoint,
                                const std::filesystem::path& gguf_file,
                                const std::string& architecture, const GgufEdits& edits,
                                int shards) {
  const json c = json::parse(std::ifstream(checkpoint / "config.json"));
  const TensorDirectory dir = TensorDirectory::open(checkpoint);
  EditedWriter w(edits);
  for (auto& [key, value] : gguf::metadata_of_hf_config(c, architecture, "gguf_from_checkpoint"))
    w.set(key, value);
  std::map<std::string, std::vector<const TensorInfo*>> experts;  // "blk.L.ffn_X_exps.weight"
  for (const TensorInfo& t : dir.tensors()) {
    const auto ggml_dims = [&] { return std::vector<int64_t>(t.shape.rbegin(), t.shape.rend()); };
    std::string name;
    if (const auto plain = gguf::gguf_name_of_hf_tensor(t.name))
      name = *plain;
    else if (const auto in_layer = layer_of(t.name)) {
      const int layer = in_layer->first;
      const std::string& suffix = in_layer->second;
      if (suffix == "self_attn.kv_b_proj.weight") {
        add_kv_b(w, dir, t, layer, c);
        continue;
      }
      if (const auto expert = expert_of(suffix)) {
        auto& list = experts[gguf::experts_tensor_name(layer, expert->second)];
        const auto e = static_cast<size_t>(expert->first);
        if (list.size() <= e) list.resize(e + 1);
        list[e] = &t;
        continue;
      }
      throw std::runtime_error("unmapped tensor " + t.name);
    } else {
      throw std::runtime_error("unmapped tensor " + t.name);
    }
    w.add_tensor(name, ggml_type_of(t.dtype), ggml_dims(), read_bytes(dir, t));
  }
  for (const auto& [name, list] : experts) {
    std::string stacked;
    for (const TensorInfo* t : list) stacked += read_bytes(dir, *t);
    const TensorInfo& first = *list.front();
    w.add_tensor(name, ggml_type_of(first.dtype),
                 {first.shape[1], first.shape[0], static_cast<int64_t>(list.size())}, stacked);
  }
  w.write(gguf_file, shards);
}

}  // namespace glmrt::test
