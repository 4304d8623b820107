#include <glmrt/model/feed_forward.h>
#include <glmrt/model/norms.h>
#include <glmrt/model/router.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <map>

namespace glmrt {

void swiglu_mlp(const Matrix& gate_w, const Matrix& up_w, const Matrix& down_w,
                plugin::Kernels& kernels, std::span<const float> x, int64_t S,
                std::span<float> out) {
  const int64_t width = gate_w.rows();
  std::vector<float> gate(S * width), up(S * width);
  linear(kernels, x, S, gate_w, gate);
  linear(kernels, x, S, up_w, up);
  for (size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
  linear(kernels, gate, S, down_w, out);
}

void moe_block(const MoeWeights& w, const LayerContext& ctx, std::span<const float> x, int64_t S,
               std::span<float> out) {
  const ModelConfig& c = ctx.config;
  const int64_t D = c.hidden_size, E = c.n_routed_experts;
  const RouterParams params{static_cast<int>(E), c.num_experts_per_tok,
                            c.n_group,           c.topk_group,
                            c.norm_topk_prob,    static_cast<float>(c.routed_scaling_factor)};

  std::vector<float> logits(S * E);
  linear(ctx.kernels, x, S, w.router, logits);

  // Which positions chose each expert, and with what weight. Ascending expert
  // order, as the reference sums them.
  struct Users {
    std::vector<int64_t> positions;
    std::vector<float> weights;
  };
  std::map<int32_t, Users> by_expert;
  const int64_t pos0 = ctx.trace ? ctx.cache.length(ctx.layer) - S : 0;
  std::vector<int32_t> chosen;  // every position's choices, for the routing observer
  for (int64_t s = 0; s < S; ++s) {
    const std::vector<RoutedExpert> routed =
        route(std::span(logits).subspan(s * E, E), w.correction_bias, params);
    for (const RoutedExpert& r : routed) {
      by_expert[r.expert].positions.push_back(s);
      by_expert[r.expert].weights.push_back(r.weight);
      if (ctx.routing) chosen.push_back(r.expert);
    }
    if (ctx.trace) {
      std::vector<int32_t> ids;
      for (const RoutedExpert& r : routed) ids.push_back(r.expert);
      ctx.trace->record_experts(ctx.layer, pos0 + s, std::move(ids));
    }
  }
  if (ctx.routing) ctx.routing->on_routed(ctx.layer, S, chosen);
  std::vector<int32_t> ids;
  for (const auto& [id, users] : by_expert) ids.push_back(id);
  const auto experts = ctx.experts.acquire(ctx.layer, ids);

  std::fill(out.begin(), out.end(), 0.f);
  std::vector<float> rows, y;
  for (size_t k = 0; k < ids.size(); ++k) {
    const Users& users = by_expert[ids[k]];
    const int64_t n = static_cast<int64_t>(users.positions.size());
    rows.resize(n * D);
    y.resize(n * D);
    for (int64_t r = 0; r < n; ++r)
      std::copy_n(x.begin() + users.positions[r] * D, D, rows.begin() + r * D);
    swiglu_mlp(experts[k]->gate, experts[k]->up, experts[k]->down, ctx.kernels, rows, n, y);
    for (int64_t r = 0; r < n; ++r) {
      float* o = out.data() + users.positions[r] * D;
      const float wgt = users.weights[r];
      for (int64_t d = 0; d < D; ++d) o[d] += wgt * y[r * D + d];
    }
  }

  std::vector<float> shared(S * D);
  swiglu_mlp(w.shared, ctx.kernels, x, S, shared);
  for (int64_t i = 0; i < S * D; ++i) out[i] += shared[i];
}

}  // namespace glmrt
