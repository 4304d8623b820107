#include <glmrt/model/feed_forward.h>
#include <glmrt/model/kernel_lanes.h>
#include <glmrt/model/norms.h>
#include <glmrt/model/router.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <chrono>

namespace glmrt {
namespace {

template <typename T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

/// Groups the positions by the experts they chose: ids ascending, each
/// expert's users in position order, and each position's users ordered by
/// expert id (the order the reference sums them in).
void group_by_expert(const MoeWeights& w, const LayerContext& ctx, int64_t S, MoeScratch& m) {
  const ModelConfig& c = ctx.config;
  const int64_t E = c.n_routed_experts, K = c.num_experts_per_tok;
  const RouterParams params{static_cast<int>(E), c.num_experts_per_tok,
                            c.n_group,           c.topk_group,
                            c.norm_topk_prob,    static_cast<float>(c.routed_scaling_factor)};
  m.count.assign(static_cast<size_t>(E), 0);
  std::vector<std::vector<RoutedExpert>> routed(static_cast<size_t>(S));
  const int64_t pos0 = ctx.trace ? ctx.cache.length(ctx.layer) - S : 0;
  for (int64_t s = 0; s < S; ++s) {
    routed[s] = route(std::span(m.logits).subspan(s * E, E), w.correction_bias, params);
    std::sort(routed[s].begin(), routed[s].end(),
              [](const RoutedExpert& a, const RoutedExpert& b) { return a.expert < b.expert; });
    for (const RoutedExpert& r : routed[s]) ++m.count[static_cast<size_t>(r.expert)];
    if (ctx.trace) {
      std::vector<int32_t> ids;
      for (const RoutedExpert& r : routed[s]) ids.push_back(r.expert);
      ctx.trace->record_experts(ctx.layer, pos0 + s, std::move(ids));
    }
  }
  if (ctx.routing) {
    std::vector<int32_t> chosen;  // every position's choices, position-major
    for (const auto& position : routed)
      for (const RoutedExpert& r : position) chosen.push_back(r.expert);
    ctx.routing->on_routed(ctx.layer, S, chosen);
  }
  m.ids.clear();
  m.first_user.assign(static_cast<size_t>(E) + 1, 0);
  for (int64_t e = 0; e < E; ++e) {
    if (m.count[e]) m.ids.push_back(static_cast<int32_t>(e));
    m.first_user[e + 1] = m.first_user[e] + m.count[e];
  }
  const size_t users = static_cast<size_t>(m.first_user[E]);
  grow(m.user_position, users);
  grow(m.user_weight, users);
  grow(m.position_users, static_cast<size_t>(S * K));
  std::fill(m.count.begin(), m.count.end(), 0);
  for (int64_t s = 0; s < S; ++s) {
    for (size_t j = 0; j < routed[s].size(); ++j) {
      const RoutedExpert& r = routed[s][j];
      const int64_t u = m.first_user[r.expert] + m.count[r.expert]++;
      m.user_position[u] = s;
      m.user_weight[u] = r.weight;
      m.position_users[s * K + static_cast<int64_t>(j)] = u;
    }
  }
}

/// One expert over its users: gathers their rows, SwiGLU, writes each
/// user's output row into the contributions.
/// (Experts run side by side, each on its own kernels lane with its own
/// buffers; each writes only its users' rows of the contributions.)
void run_expert(const Expert& e, plugin::Kernels& kernels, const LayerContext& ctx,
                std::span<const float> x, int32_t id, MoeScratch& m, MoeScratch::ExpertBuffers& b) {
  const int64_t D = ctx.config.hidden_size, I = e.gate.rows;
  const int64_t first = m.first_user[id], n = m.first_user[id + 1] - first;
  grow(b.gate, static_cast<size_t>(n * I));
  grow(b.up, static_cast<size_t>(n * I));
  // A single user's row is used where it is.
  std::span<const float> rows =
      x.subspan(static_cast<size_t>(m.user_position[first] * D), static_cast<size_t>(D));
  if (n > 1) {
    grow(b.rows, static_cast<size_t>(n * D));
    for (int64_t r = 0; r < n; ++r)
      std::copy_n(x.begin() + m.user_position[first + r] * D, D, b.rows.begin() + r * D);
    rows = std::span<const float>(b.rows.data(), static_cast<size_t>(n * D));
  }
  const std::span<float> gate(b.gate.data(), static_cast<size_t>(n * I));
  const std::span<float> up(b.up.data(), static_cast<size_t>(n * I));
  const auto observe = [&](std::string_view weight, std::span<const float> input) {
    observe_input(ctx.activations, {ctx.layer, id, {}, weight}, input, n);
  };
  observe("gate_proj.weight", rows);
  observe("up_proj.weight", rows);
  linear(kernels, rows, n, e.gate, gate);
  linear(kernels, rows, n, e.up, up);
  for (size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
  observe("down_proj.weight", gate);
  linear(kernels, gate, n, e.down,
         std::span(m.contributions)
             .subspan(static_cast<size_t>(first * D), static_cast<size_t>(n * D)));
}

}  // namespace

void swiglu_mlp(const Matrix& gate_w, const Matrix& up_w, const Matrix& down_w,
                plugin::Kernels& kernels, std::span<const float> x, int64_t S, std::span<float> out,
                const LayerContext* observed, std::string_view module) {
  const int64_t width = gate_w.rows();
  std::vector<float> gate(S * width), up(S * width);
  if (observed) {
    observed->observe(module, "gate_proj.weight", x, S);
    observed->observe(module, "up_proj.weight", x, S);
  }
  linear(kernels, x, S, gate_w, gate);
  linear(kernels, x, S, up_w, up);
  for (size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
  if (observed) observed->observe(module, "down_proj.weight", gate, S);
  linear(kernels, gate, S, down_w, out);
}

void moe_block(const MoeWeights& w, const LayerContext& ctx, std::span<const float> x, int64_t S,
               std::span<float> out, const std::function<void()>& reads_queued) {
  MoeScratch local;
  MoeScratch& m = ctx.moe_scratch ? *ctx.moe_scratch : local;
  const int64_t D = ctx.config.hidden_size, E = ctx.config.n_routed_experts;
  const int64_t K = ctx.config.num_experts_per_tok;
  grow(m.logits, static_cast<size_t>(S * E));
  linear(ctx.kernels, x, S, w.router, std::span(m.logits).first(static_cast<size_t>(S * E)));
  group_by_expert(w, ctx, S, m);
  grow(m.contributions, static_cast<size_t>(m.first_user[E] * D));

  double expert_seconds = 0;
  if (m.expert_buffers.size() < std::max<size_t>(ctx.lanes.size(), 1))
    m.expert_buffers.resize(std::max<size_t>(ctx.lanes.size(), 1));
  ctx.experts.run_step_batches(
      ctx.layer, m.ids, reads_queued, [&](std::span<const ExpertStore::ReadyExpert> ready) {
        const auto t0 = std::chrono::steady_clock::now();
        for_each_on_lanes(ctx.lanes, ctx.kernels, static_cast<int64_t>(ready.size()),
                          [&](plugin::Kernels& kernels, int lane, int64_t i) {
                            const ExpertStore::ReadyExpert& r = ready[static_cast<size_t>(i)];
                            run_expert(*r.expert, kernels, ctx, x, m.ids[r.index], m,
                                       m.expert_buffers[static_cast<size_t>(lane)]);
                          });
        expert_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      });

  // Each position sums its experts in ascending id order, as the reference.
  for (int64_t s = 0; s < S; ++s) {
    float* o = out.data() + s * D;
    std::fill(o, o + D, 0.f);
    for (int64_t j = 0; j < K; ++j) {
      const int64_t u = m.position_users[s * K + j];
      const float wgt = m.user_weight[u];
      const float* y = m.contributions.data() + u * D;
      for (int64_t d = 0; d < D; ++d) o[d] += wgt * y[d];
    }
  }
  if (ctx.times) ctx.times->experts += expert_seconds;

  grow(m.shared, static_cast<size_t>(S * D));
  const std::span<float> shared(m.shared.data(), static_cast<size_t>(S * D));
  swiglu_mlp(w.shared, ctx.kernels, x, S, shared, ctx.activations ? &ctx : nullptr,
             "mlp.shared_experts");
  for (int64_t i = 0; i < S * D; ++i) out[i] += shared[i];
}

}  // namespace glmrt
