#include <fnmatch.h>
#include <glmrt/convert/tensor_roles.h>

#include <charconv>

namespace glmrt {
namespace {

// The layer number of "model.layers.N....", or -1.
int layer_of(std::string_view name) {
  constexpr std::string_view prefix = "model.layers.";
  if (!name.starts_with(prefix)) return -1;
  name.remove_prefix(prefix.size());
  int layer = -1;
  std::from_chars(name.data(), name.data() + name.size(), layer);
  return layer;
}

bool has_part(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

std::string_view role_name(TensorRole role) {
  switch (role) {
    case TensorRole::experts:
      return "experts";
    case TensorRole::dense:
      return "dense";
    case TensorRole::embed:
      return "embed";
    case TensorRole::lm_head:
      return "lm-head";
    case TensorRole::kv_b:
      return "kv-b";
    case TensorRole::kept:
      return "kept";
    case TensorRole::block_scales:
      return "block scales";
    case TensorRole::dropped:
      return "dropped";
  }
  return "?";
}

std::string block_scale_name(const std::string& name) {
  return name + "_scale_inv";
}

TensorRole tensor_role(const TensorInfo& t, int main_layers, bool drop_mtp) {
  const std::string_view name = t.name;
  if (drop_mtp && layer_of(name) >= main_layers) return TensorRole::dropped;
  if (name.ends_with("_scale_inv")) return TensorRole::block_scales;
  // Matrices the runtime multiplies with through the kernels; the router
  // (mlp.gate) and the indexer's weights_proj are read in f32.
  const bool matrix = t.shape.size() == 2 && name.ends_with(".weight") &&
                      !name.ends_with(".mlp.gate.weight") && !has_part(name, "weights_proj");
  if (!matrix) return TensorRole::kept;
  if (has_part(name, ".mlp.experts.")) return TensorRole::experts;
  if (has_part(name, "embed_tokens")) return TensorRole::embed;
  if (name == "lm_head.weight" || has_part(name, "shared_head.head")) return TensorRole::lm_head;
  if (has_part(name, "kv_b_proj")) return TensorRole::kv_b;
  return TensorRole::dense;
}

WeightPrecision role_precision(const ConvertOptions& o, TensorRole role, const std::string& name) {
  const bool narrow_dense = o.dense.quantized() && o.dense.bits != WeightBits::int8;
  const WeightPrecision boundary =
      narrow_dense ? WeightPrecision(WeightBits::int8) : WeightPrecision(WeightBits::bf16);
  WeightPrecision p = o.dense;
  switch (role) {
    case TensorRole::experts:
      p = o.experts;
      break;
    case TensorRole::embed:
      p = o.embed.value_or(boundary);
      break;
    case TensorRole::lm_head:
      p = o.lm_head.value_or(boundary);
      break;
    case TensorRole::kv_b:
      p = o.kv_b.value_or(o.dense);
      break;
    default:
      break;
  }
  for (const auto& [pattern, precision] : o.overrides)
    if (::fnmatch(pattern.c_str(), name.c_str(), 0) == 0) p = precision;
  return p;
}

}  // namespace glmrt
