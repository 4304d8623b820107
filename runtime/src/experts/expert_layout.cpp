#include <glmrt/base/error.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/weights/tensor_loader.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace glmrt {
namespace {

ExpertTensorPlace place_tensor(const TensorDirectory& dir, const std::string& name, int64_t rows,
                               int64_t cols) {
  ExpertTensorPlace p;
  p.rows = rows;
  p.cols = cols;
  p.values = &dir.at(name);
  const auto& file = dir.files().at(p.values->file_index);
  p.scales = dir.find(name + ".qs");
  if (p.scales) {
    p.packed_type = TensorLoader::packed_type_for(p.values->byte_size, rows, cols);
    if (p.values->dtype != DType::U8 || p.packed_type < 0)
      fail("tensor {} in {}: pre-quantized expert must be U8 holding a {}x{} int8/int4/int2 matrix",
           name, file, rows, cols);
    if (p.scales->dtype != DType::F32 || p.scales->shape != std::vector<int64_t>{rows})
      fail("tensor {}.qs in {}: expected F32 scales of shape [{}]", name,
           dir.files().at(p.scales->file_index), rows);
    return p;
  }
  if (!is_float_dtype(p.values->dtype))
    fail("tensor {} in {}: dtype {} is not supported for expert weights (F32, BF16, F16)", name,
         file, dtype_name(p.values->dtype));
  if (p.values->shape != std::vector<int64_t>{rows, cols})
    fail("tensor {} in {} has shape [{}], the config implies [{}, {}]", name, file,
         fmt::join(p.values->shape, ", "), rows, cols);
  return p;
}

ExpertLayout plan_expert(const ModelConfig& c, const TensorDirectory& dir, int layer, int expert) {
  const int64_t D = c.hidden_size, I = c.moe_intermediate_size;
  const std::string base = fmt::format("model.layers.{}.mlp.experts.{}.", layer, expert);
  ExpertLayout l;
  l.tensors = {place_tensor(dir, base + "gate_proj.weight", I, D),
               place_tensor(dir, base + "up_proj.weight", I, D),
               place_tensor(dir, base + "down_proj.weight", D, I)};
  std::vector<ExpertExtent> pieces;
  for (const auto& t : l.tensors) {
    pieces.push_back({t.values->file_index, t.values->offset, t.values->byte_size});
    if (t.scales) pieces.push_back({t.scales->file_index, t.scales->offset, t.scales->byte_size});
  }
  std::sort(pieces.begin(), pieces.end(), [](const ExpertExtent& a, const ExpertExtent& b) {
    return a.file != b.file ? a.file < b.file : a.offset < b.offset;
  });
  for (const auto& p : pieces) {
    if (!l.extents.empty() && l.extents.back().file == p.file &&
        l.extents.back().offset + l.extents.back().length == p.offset) {
      l.extents.back().length += p.length;
    } else {
      l.extents.push_back(p);
    }
    l.bytes += p.length;
  }
  return l;
}

}  // namespace

uint64_t ExpertLayout::staging_offset(const TensorInfo& t) const {
  uint64_t base = 0;
  for (const auto& e : extents) {
    if (e.file == t.file_index && t.offset >= e.offset &&
        t.offset + t.byte_size <= e.offset + e.length)
      return base + (t.offset - e.offset);
    base += e.length;
  }
  fail("tensor {} is not inside any extent of its expert", t.name);
}

std::vector<std::vector<ExpertLayout>> plan_expert_layouts(const ModelConfig& c,
                                                           const TensorDirectory& dir,
                                                           int n_layers_with_mtp) {
  std::vector<std::vector<ExpertLayout>> layouts(n_layers_with_mtp);
  for (int layer = 0; layer < n_layers_with_mtp; ++layer) {
    if (c.mlp_kind(layer) != MlpKind::sparse) continue;
    layouts[layer].reserve(c.n_routed_experts);
    for (int e = 0; e < c.n_routed_experts; ++e)
      layouts[layer].push_back(plan_expert(c, dir, layer, e));
  }
  return layouts;
}

}  // namespace glmrt
