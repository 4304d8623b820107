#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/convert/conversion_plan.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <string>
#include <tuple>

namespace glmrt {
namespace {

struct PlannedExpertKey {
  int layer = -1, expert = -1, matrix = -1;  // matrix: 0 gate, 1 up, 2 down
};

int parse_int(std::string_view& s) {
  int v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) return -1;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return v;
}

// "model.layers.L.mlp.experts.E.gate_proj.weight" -> {L, E, 0}.
PlannedExpertKey expert_key(std::string_view name) {
  PlannedExpertKey k;
  constexpr std::string_view a = "model.layers.", b = ".mlp.experts.";
  if (!name.starts_with(a)) return k;
  name.remove_prefix(a.size());
  const int layer = parse_int(name);
  if (!name.starts_with(b)) return k;
  name.remove_prefix(b.size());
  const int expert = parse_int(name);
  const std::string_view kinds[3] = {".gate_proj.weight", ".up_proj.weight", ".down_proj.weight"};
  for (int m = 0; m < 3; ++m)
    if (name == kinds[m]) return {layer, expert, m};
  return k;
}

// Resident order: embeddings, then layer by layer, then the rest (final
// norm, lm_head).
std::tuple<int, std::string_view> resident_order(const TensorInfo& t) {
  std::string_view name = t.name;
  if (name.starts_with("model.embed_tokens")) return {-1, name};
  constexpr std::string_view a = "model.layers.";
  if (name.starts_with(a)) {
    std::string_view rest = name.substr(a.size());
    const int layer = parse_int(rest);
    if (layer >= 0) return {layer, name};
  }
  return {INT_MAX, name};
}

DType values_dtype(WeightPrecision p) {
  return p.bits == WeightBits::f32    ? DType::F32
         : p.bits == WeightBits::bf16 ? DType::BF16
                                      : DType::U8;
}

// Block scales are consumed by their FP8 weight: scales without one would be
// dropped without a word (and with a weight of another dtype, ignored).
void check_block_scales_owner(const TensorDirectory& dir, const TensorInfo& scales) {
  const std::string weight =
      scales.name.substr(0, scales.name.size() - std::string_view("_scale_inv").size());
  const TensorInfo* w = dir.find(weight);
  if (!w)
    fail(
        "tensor '{}' in {}: FP8 block scales of '{}', which the checkpoint does not hold (a "
        "missing shard or a renamed weight?)",
        printable(scales.name), dir.files().at(scales.file_index), printable(weight));
  if (w->dtype != DType::F8_E4M3)
    fail(
        "tensor '{}' in {}: FP8 block scales of '{}', which is {} (in {}); block scales belong "
        "to F8_E4M3 weights",
        printable(scales.name), dir.files().at(scales.file_index), printable(weight),
        dtype_name(w->dtype), dir.files().at(w->file_index));
}

class Planner {
 public:
  Planner(const TensorDirectory& dir, const ConvertOptions& o, ConversionPlan& plan)
      : dir_(dir), o_(o), plan_(plan) {}

  // Adds `t` (a matrix or a kept tensor) to `builder`/`parts`; the first
  // tensor goes at `first_alignment`.
  void add(const TensorInfo& t, TensorRole role, PlannedFileBuilder& builder,
           std::vector<ConvertedPart>& parts, uint64_t first_alignment) {
    RoleTotals& totals = plan_.totals[role];
    ++totals.tensors;
    totals.params += static_cast<uint64_t>(t.numel());
    if (role == TensorRole::kept) {
      PlannedTensor out{t.name, t.dtype, t.shape, StampedFormat::none, 0, t.byte_size, {}};
      if (t.dtype == DType::F32) out.stamp = StampedFormat::f32;
      if (t.dtype == DType::BF16) out.stamp = StampedFormat::bf16;
      builder.add(std::move(out), first_alignment);
      parts.push_back({ConvertedPart::Kind::copy, &t, nullptr, role, {}});
      totals.source_bytes += t.byte_size;
      totals.bytes += t.byte_size;
      plan_.source_bytes += t.byte_size;
      return;
    }
    const TensorInfo* block_scales = dir_.find(block_scale_name(t.name));
    if (t.dtype != DType::F8_E4M3 && !is_float_dtype(t.dtype))
      fail(
          "tensor {} in {} is {}: convert reads matrices stored as F32, BF16, F16, F64 or "
          "F8_E4M3 (with block scales {})",
          t.name, dir_.files().at(t.file_index), dtype_name(t.dtype), block_scale_name(t.name));
    if (t.dtype == DType::F8_E4M3 && !block_scales)
      fail("tensor {} in {} is F8_E4M3 but its block scales {} are missing", t.name,
           dir_.files().at(t.file_index), block_scale_name(t.name));
    const WeightPrecision p = role_precision(o_, role, t.name);
    const int64_t rows = t.shape[0], cols = t.shape[1];
    const uint32_t type = element_type_for(p);
    const int64_t row_bytes = plugin::packed_row_bytes(type, cols);
    const DType dtype = values_dtype(p);
    PlannedTensor values{t.name,
                         dtype,
                         dtype == DType::U8 ? std::vector<int64_t>{rows, row_bytes} : t.shape,
                         stamp_of_precision(p),
                         0,
                         static_cast<uint64_t>(rows * row_bytes),
                         {},
                         p.group};
    const uint64_t source = t.byte_size + (block_scales ? block_scales->byte_size : 0);
    totals.source_bytes += source;
    plan_.source_bytes += source;
    totals.bytes += values.bytes;
    RoleTotals& by_format = plan_.format_totals[{role, precision_name(p)}];
    ++by_format.tensors;
    by_format.params += static_cast<uint64_t>(t.numel());
    by_format.bytes += values.bytes;
    builder.add(std::move(values), first_alignment);
    parts.push_back({ConvertedPart::Kind::values, &t, block_scales, role, p});
    if (!p.quantized()) return;
    const int64_t per_row = MatrixStorage::scales_per_row_of(cols, p.group);
    PlannedTensor scales{t.name + (p.group ? ".gqs" : ".qs"),
                         DType::F32,
                         p.group ? std::vector<int64_t>{rows, per_row} : std::vector<int64_t>{rows},
                         StampedFormat::f32,
                         0,
                         static_cast<uint64_t>(rows * per_row) * 4,
                         {}};
    totals.bytes += scales.bytes;
    by_format.bytes += scales.bytes;
    builder.add(std::move(scales));
    parts.push_back({ConvertedPart::Kind::scales, &t, block_scales, role, p});
  }

 private:
  const TensorDirectory& dir_;
  const ConvertOptions& o_;
  ConversionPlan& plan_;
};

}  // namespace

ConversionPlan plan_conversion(const TensorDirectory& dir, const ConvertOptions& o, int main_layers,
                               std::array<int64_t, 2> fp8_block) {
  ConversionPlan plan;
  plan.fp8_block = fp8_block;
  Planner planner(dir, o, plan);
  std::vector<const TensorInfo*> resident;
  // experts[layer][expert][matrix]
  std::map<int, std::map<int, std::array<const TensorInfo*, 3>>> experts;
  for (const TensorInfo& t : dir.tensors()) {
    const TensorRole role = tensor_role(t, main_layers, o.drop_mtp);
    if (role == TensorRole::block_scales) check_block_scales_owner(dir, t);
    if (role == TensorRole::dropped || role == TensorRole::block_scales) {
      ++plan.totals[role].tensors;
      continue;
    }
    if (role == TensorRole::experts) {
      const PlannedExpertKey k = expert_key(t.name);
      if (k.matrix >= 0) {
        experts[k.layer][k.expert][k.matrix] = &t;
        continue;
      }
    }
    resident.push_back(&t);
  }
  std::sort(resident.begin(), resident.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return resident_order(*a) < resident_order(*b);
  });

  std::vector<PlannedFile> files;
  std::vector<std::vector<ConvertedPart>> parts;
  PlannedFileBuilder builder;
  std::vector<ConvertedPart> file_parts;
  auto close_file = [&] {
    if (builder.empty()) return;
    files.push_back(std::move(builder).build());
    parts.push_back(std::move(file_parts));
    builder = PlannedFileBuilder();
    file_parts.clear();
  };
  for (const TensorInfo* t : resident) {
    if (!builder.empty() && builder.end() + t->byte_size > o.max_shard_bytes) close_file();
    planner.add(*t, tensor_role(*t, main_layers, o.drop_mtp), builder, file_parts,
                PlannedFileBuilder::kTensorAlignment);
  }
  close_file();
  for (const auto& [layer, by_expert] : experts) {
    for (const auto& [expert, matrices] : by_expert) {
      for (int m = 0; m < 3; ++m) {
        if (!matrices[m])
          fail("{}: routed expert {} of layer {} lacks its {} matrix", dir.files().front(), expert,
               layer,
               m == 0   ? "gate_proj"
               : m == 1 ? "up_proj"
                        : "down_proj");
        planner.add(*matrices[m], TensorRole::experts, builder, file_parts,
                    m == 0 ? kExpertAlignment : PlannedFileBuilder::kTensorAlignment);
      }
    }
    close_file();
  }
  for (size_t k = 0; k < files.size(); ++k) files[k].name = shard_name(k, files.size());
  plan.layout.files = std::move(files);
  plan.parts = std::move(parts);
  return plan;
}

}  // namespace glmrt
