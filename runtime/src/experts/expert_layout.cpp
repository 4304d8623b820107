#include <glmrt/experts/expert_layout.h>
#include <glmrt/weights/stored_matrix.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace glmrt {
namespace {

// Pieces of one expert at most this far apart are read as one extent, gap
// included: a container that pads each matrix to an alignment (glmrt's) still
// reads an expert in one request, and another request costs more than a block.
constexpr uint64_t kMaxBridgedGapBytes = 4096;

ExpertTensorPlace place_tensor(const TensorDirectory& dir, const std::string& name, int64_t rows,
                               int64_t cols) {
  const StoredMatrix m = find_stored_matrix(dir, name, rows, cols);
  ExpertTensorPlace p;
  p.rows = rows;
  p.cols = cols;
  p.values = m.values;
  p.scales = m.scales;
  if (m.prequantized()) p.packed_type = static_cast<int>(m.packed_type);
  p.group_size = m.group_size;
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
    ExpertExtent* last = l.extents.empty() ? nullptr : &l.extents.back();
    const uint64_t last_end = last ? last->offset + last->length : 0;
    if (last && last->file == p.file && p.offset >= last_end &&
        p.offset - last_end <= kMaxBridgedGapBytes) {
      last->length = std::max(last_end, p.offset + p.length) - last->offset;
    } else {
      l.extents.push_back(p);
    }
  }
  for (const auto& e : l.extents) l.bytes += e.length;
  return l;
}

}  // namespace

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
