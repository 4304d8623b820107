#include "gguf_model_writer.h"

#include "ggml_block_fill.h"
#include "random_bits.h"
#include "weight_fill.h"

#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/model_files/gguf_from_hf.h>
#include <glmrt/model_files/gguf_writer.h>
#include <glmrt/model_maker/gguf_types.h>
#include <glmrt/model_maker/model_plan.h>
#include <glmrt/model_maker/output_directory.h>
#include <glmrt/plugin/ggml_types.h>

#include <fmt/format.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using Fill = TensorRecipe::Fill;

// One GGUF tensor: `slices` matrices of rows x cols (routed experts stacked,
// one slice otherwise) drawn from `keys`, or an F32 tensor of the plan.
struct GgufTensorPlan {
  std::string name;
  GgufRole role = GgufRole::dense;
  uint32_t type = GLMRT_GGML_F32;
  int64_t rows = 0, cols = 0;
  std::vector<std::string> keys;  // one per slice
  double rms = 0;
  const PlannedTensor* f32 = nullptr;  // drawn as the container's F32 tensor
  int64_t heads = 0;                   // attn_k_b / attn_v_b: rows per head x heads
  std::vector<int64_t> dims() const {
    if (f32) return {f32->shape.rbegin(), f32->shape.rend()};
    if (heads > 0) return {cols, rows / heads, heads};
    if (keys.size() > 1) return {cols, rows, static_cast<int64_t>(keys.size())};
    return {cols, rows};
  }
};

// (layer, rest) of "model.layers.L.rest".
std::optional<std::pair<int, std::string>> in_layer(const std::string& name) {
  constexpr std::string_view kLayers = "model.layers.";
  if (!name.starts_with(kLayers)) return std::nullopt;
  const size_t dot = name.find('.', kLayers.size());
  if (dot == std::string::npos) return std::nullopt;
  return std::pair{std::stoi(name.substr(kLayers.size(), dot - kLayers.size())),
                   name.substr(dot + 1)};
}

GgufRole role_of(const std::string& hf_name) {
  if (hf_name == "model.embed_tokens.weight") return GgufRole::embed;
  if (hf_name == "lm_head.weight") return GgufRole::output;
  return GgufRole::dense;
}

std::vector<GgufTensorPlan> gguf_tensors(const ModelPlan& plan, const nlohmann::ordered_json& c) {
  const int64_t H = c.at("num_attention_heads"), L = c.at("kv_lora_rank");
  const int64_t nope = c.at("qk_nope_head_dim"), v = c.at("v_head_dim");
  std::vector<GgufTensorPlan> out;
  std::map<std::string, size_t> stacks;  // experts tensor name -> index in out
  for (const PlannedFile& file : plan.files)
    for (const PlannedTensor& t : file.tensors) {
      const TensorRecipe& r = t.recipe;
      if (r.fill == Fill::row_scales) continue;  // the container's scales: folded into blocks
      if (r.fill != Fill::packed) {
        const auto name = gguf::gguf_name_of_hf_tensor(t.name);
        if (!name) fail("make-model: no GGUF name for {}", t.name);
        out.push_back({*name, GgufRole::dense, GLMRT_GGML_F32, 0, 0, {}, 0, &t});
        continue;
      }
      const auto layer = in_layer(t.name);
      if (layer && layer->second == "self_attn.kv_b_proj.weight") {
        // Split as llama.cpp splits it; random either way, so drawn apart.
        const int l = layer->first;
        out.push_back({gguf::key_b_tensor_name(l),
                       GgufRole::kv_b,
                       0,
                       H * L,
                       nope,
                       {t.name + ".k_b"},
                       r.stddev,
                       nullptr,
                       H});
        out.push_back({gguf::value_b_tensor_name(l),
                       GgufRole::kv_b,
                       0,
                       H * v,
                       L,
                       {t.name + ".v_b"},
                       r.stddev,
                       nullptr,
                       H});
        continue;
      }
      if (layer && layer->second.starts_with("mlp.experts.")) {
        // "mlp.experts.E.gate_proj.weight" -> gate
        const std::string& rest = layer->second;
        const size_t kind = rest.find('.', std::string_view("mlp.experts.").size()) + 1;
        const std::string name =
            gguf::experts_tensor_name(layer->first, rest.substr(kind, rest.find('_', kind) - kind));
        const auto [it, added] = stacks.emplace(name, out.size());
        if (added) out.push_back({name, GgufRole::experts, 0, r.rows, r.cols, {}, r.stddev});
        out[it->second].keys.push_back(r.key);
        continue;
      }
      const auto name = gguf::gguf_name_of_hf_tensor(t.name);
      if (!name) fail("make-model: no GGUF name for {}", t.name);
      out.push_back({*name, role_of(t.name), 0, r.rows, r.cols, {r.key}, r.stddev});
    }
  return out;
}

const char* role_name(GgufRole role) {
  switch (role) {
    case GgufRole::experts:
      return "experts";
    case GgufRole::dense:
      return "dense";
    case GgufRole::kv_b:
      return "kv_b";
    case GgufRole::embed:
      return "embed";
    case GgufRole::output:
      return "output";
  }
  return "dense";
}

void check_blocks(const GgufTensorPlan& t) {
  const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(t.type);
  if (t.cols % traits.block_values != 0)
    fail(
        "--gguf-types: tensor {} has rows of {} values, not a whole number of {}'s {}-value "
        "blocks; give its role ({}) a type with smaller blocks",
        t.name, t.cols, traits.name, traits.block_values, role_name(t.role));
}

void check_new_file(const fs::path& out) {
  struct stat st {};
  if (::lstat(out.c_str(), &st) == 0)
    fail(
        "--out {} already exists (it is {}): make-model writes only a new file, and never "
        "replaces anything",
        out, describe_file_type(st.st_mode));
}

uint64_t row_key(uint64_t key, int64_t row) {
  return mix(key + 0x632be59bd9b4e019ull) ^ mix(static_cast<uint64_t>(row) + 1);
}

}  // namespace

MakeModelResult make_gguf_model(const MakeModelOptions& o, const nlohmann::ordered_json& config) {
  const auto start = std::chrono::steady_clock::now();
  if (o.successor_head)
    fail(
        "--successor-head: make-model writes it in the container form only (not with --format "
        "gguf)");
  const GgufTypes types = parse_gguf_types(o.gguf_types);
  const ModelPlan plan = plan_model(config, o.hot_skew);
  std::vector<GgufTensorPlan> tensors = gguf_tensors(plan, config);
  std::map<uint32_t, std::unique_ptr<GgmlRowFiller>> fillers;
  for (GgufTensorPlan& t : tensors) {
    if (t.f32) continue;
    t.type = types.of(t.role);
    check_blocks(t);
    auto& filler = fillers[t.type];
    if (!filler) filler = std::make_unique<GgmlRowFiller>(t.type);
  }
  const std::string arch = config.contains("index_topk") ? "glm-dsa" : "deepseek2";
  gguf::Writer w;
  for (auto& [key, value] :
       gguf::metadata_of_hf_config(config, arch, "glmrt make-model " + o.preset))
    w.set(key, value);
  w.set("general.alignment", gguf::Value::u32(32));
  // Random weights have no vocabulary: llama.cpp's word for that, so its tools
  // (llama-bench) load the slice too, with ARCH.vocab_size dummy tokens.
  w.set("tokenizer.ggml.model", gguf::Value::str("none"));
  for (const GgufTensorPlan& t : tensors) w.add_tensor(t.name, t.type, t.dims());

  const fs::path out = fs::absolute(o.out).lexically_normal();
  check_new_file(out);
  const uint64_t total = w.header().size() + w.offsets().back() + w.tensors().back().byte_size;
  check_free_space(out.parent_path(), total, "the model");

  std::atomic<uint64_t> written{0};
  ProgressBar bar("writing", total);
  std::vector<std::vector<uint64_t>> slice_keys(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i)
    for (const std::string& k : tensors[i].keys) slice_keys[i].push_back(key_hash(k, o.seed));
  w.write(out, [&](size_t index, int64_t first_row, std::span<std::byte> bytes) {
    const GgufTensorPlan& t = tensors[index];
    if (t.f32) {
      // F32 rows are the generation's rows (dims[0] = the tensor's last
      // dimension); a tensor drawn as one row comes whole, in one piece.
      const uint64_t row_bytes = t.f32->bytes / static_cast<uint64_t>(t.f32->generation_rows());
      const auto rows = static_cast<int64_t>(bytes.size() / row_bytes);
      fill_tensor_rows(*t.f32, o.seed, first_row, rows, bytes);
    } else {
      const GgmlRowFiller& filler = *fillers.at(t.type);
      const auto row_bytes = static_cast<size_t>(plugin::ggml_row_bytes(t.type, t.cols));
      const std::vector<uint64_t>& keys = slice_keys[index];
      const auto count = static_cast<int64_t>(bytes.size() / row_bytes);
#pragma omp parallel for schedule(dynamic, 64)
      for (int64_t k = 0; k < count; ++k) {
        const int64_t i = first_row + k;
        filler.fill_row(row_key(keys[static_cast<size_t>(i / t.rows)], i % t.rows), t.rms, t.cols,
                        bytes.subspan(static_cast<size_t>(k) * row_bytes, row_bytes));
      }
    }
    bar.update(written += bytes.size());
  });
  bar.finish();

  MakeModelResult result;
  result.bytes = total;
  result.files = 1;
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace glmrt
