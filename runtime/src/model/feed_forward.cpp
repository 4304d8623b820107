#include <glmrt/base/elapsed_time.h>
#include <glmrt/model/feed_forward.h>
#include <glmrt/model/norms.h>
#include <glmrt/model/router.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <chrono>

#include <omp.h>

namespace glmrt {
namespace {

template <typename T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

/// Groups the positions by the experts they chose: ids ascending, each
/// expert's users in position order, and each position's users ordered by
/// expert id (the order the reference sums them in).
void group_by_expert(const MoeWeights& w, const LayerCall& ctx, int64_t S, MoeScratch& m) {
  const ModelConfig& c = ctx.model.config;
  const int64_t E = c.n_routed_experts, K = c.num_experts_per_tok;
  const RouterParams params{static_cast<int>(E), c.num_experts_per_tok,
                            c.n_group,           c.topk_group,
                            c.norm_topk_prob,    static_cast<float>(c.routed_scaling_factor)};
  m.count.assign(static_cast<size_t>(E), 0);
  std::vector<std::vector<RoutedExpert>> routed(static_cast<size_t>(S));
  const int64_t pos0 = ctx.model.trace ? ctx.cache.length(ctx.layer) - S : 0;
  for (int64_t s = 0; s < S; ++s) {
    routed[s] = route(std::span(m.logits).subspan(s * E, E), w.correction_bias, params);
    std::sort(routed[s].begin(), routed[s].end(),
              [](const RoutedExpert& a, const RoutedExpert& b) { return a.expert < b.expert; });
    for (const RoutedExpert& r : routed[s]) ++m.count[static_cast<size_t>(r.expert)];
    if (ctx.model.trace) {
      std::vector<int32_t> ids;
      for (const RoutedExpert& r : routed[s]) ids.push_back(r.expert);
      ctx.model.trace->record_experts(ctx.layer, pos0 + s, std::move(ids));
    }
  }
  if (ctx.model.routing) {
    std::vector<int32_t> chosen;  // every position's choices, position-major
    for (const auto& position : routed)
      for (const RoutedExpert& r : position) chosen.push_back(r.expert);
    ctx.model.routing->on_routed(ctx.layer, S, chosen);
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

/// The ready experts of a batch, a few at a time: each expert's users'
/// rows gathered (a single user's row is used where it is), gate and up of
/// every expert in one grouped call, SwiGLU, then every down projection in
/// one grouped call straight into the users' contribution rows. The experts
/// of one call hold at most `max_users` users' rows, so a long prefill's
/// buffers stay a few positions' worth per thread.
void run_experts(std::span<const ExpertStore::ReadyExpert> ready, const LayerCall& ctx,
                 std::span<const float> x, MoeScratch& m, int64_t max_users) {
  const int64_t D = ctx.model.config.hidden_size;
  size_t begin = 0;
  while (begin < ready.size()) {
    // Experts [begin, end): as many as fit max_users (one at least).
    size_t end = begin;
    int64_t users = 0, widest = 0;
    while (end < ready.size()) {
      const int32_t id = m.ids[ready[end].index];
      const int64_t n = m.first_user[id + 1] - m.first_user[id];
      if (end > begin && users + n > max_users) break;
      users += n;
      widest = std::max(widest, ready[end].expert->gate.rows);
      ++end;
    }
    grow(m.expert_rows, static_cast<size_t>(users * D));
    grow(m.expert_gate, static_cast<size_t>(users * widest));
    grow(m.expert_up, static_cast<size_t>(users * widest));
    m.products.clear();
    int64_t offset = 0;  // first user of this expert within the call
    for (size_t k = begin; k < end; ++k) {
      const Expert& e = *ready[k].expert;
      const int32_t id = m.ids[ready[k].index];
      const int64_t first = m.first_user[id], n = m.first_user[id + 1] - first;
      const float* rows = x.data() + m.user_position[first] * D;
      if (n > 1) {
        float* gathered = m.expert_rows.data() + offset * D;
        for (int64_t r = 0; r < n; ++r)
          std::copy_n(x.begin() + m.user_position[first + r] * D, D, gathered + r * D);
        rows = gathered;
      }
      const std::span<const float> input(rows, static_cast<size_t>(n * D));
      observe_input(ctx.model.activations, {ctx.layer, id, {}, "gate_proj.weight"}, input, n);
      observe_input(ctx.model.activations, {ctx.layer, id, {}, "up_proj.weight"}, input, n);
      m.products.push_back(
          matmul_product(rows, n, 0, e.gate, m.expert_gate.data() + offset * widest, 0));
      m.products.push_back(
          matmul_product(rows, n, 0, e.up, m.expert_up.data() + offset * widest, 0));
      offset += n;
    }
    ctx.model.kernels.grouped_matmul(m.products);
    m.products.clear();
    offset = 0;
    for (size_t k = begin; k < end; ++k) {
      const Expert& e = *ready[k].expert;
      const int32_t id = m.ids[ready[k].index];
      const int64_t first = m.first_user[id], n = m.first_user[id + 1] - first;
      float* gate = m.expert_gate.data() + offset * widest;
      const float* up = m.expert_up.data() + offset * widest;
      for (int64_t i = 0; i < n * e.gate.rows; ++i) gate[i] = silu(gate[i]) * up[i];
      observe_input(ctx.model.activations, {ctx.layer, id, {}, "down_proj.weight"},
                    std::span<const float>(gate, static_cast<size_t>(n * e.gate.rows)), n);
      m.products.push_back(
          matmul_product(gate, n, 0, e.down, m.contributions.data() + first * D, 0));
      offset += n;
    }
    ctx.model.kernels.grouped_matmul(m.products);
    begin = end;
  }
}

}  // namespace

void swiglu_mlp(const Matrix& gate_w, const Matrix& up_w, const Matrix& down_w,
                KernelsBackend& kernels, std::span<const float> x, int64_t S, std::span<float> out,
                const LayerCall* observed, std::string_view module) {
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

void moe_block(const MoeWeights& w, const LayerCall& ctx, std::span<const float> x, int64_t S,
               std::span<float> out, const std::function<void()>& reads_queued) {
  MoeScratch& m = ctx.model.moe_scratch;
  const int64_t D = ctx.model.config.hidden_size, E = ctx.model.config.n_routed_experts;
  const int64_t K = ctx.model.config.num_experts_per_tok;
  grow(m.logits, static_cast<size_t>(S * E));
  linear(ctx.model.kernels, x, S, w.router, std::span(m.logits).first(static_cast<size_t>(S * E)));
  group_by_expert(w, ctx, S, m);
  grow(m.contributions, static_cast<size_t>(m.first_user[E] * D));

  double expert_seconds = 0;
  // Per grouped call: every user of the step, but at most a few positions'
  // worth per thread (the memory plan counts kGroupedExpertRows).
  const int64_t max_users =
      std::min<int64_t>(m.first_user[E], std::max<int64_t>(S, kGroupedExpertRows) *
                                             std::max(omp_get_max_threads(), 1));
  ctx.model.experts.run_step_batches(
      ctx.layer, m.ids, reads_queued, [&](std::span<const ExpertStore::ReadyExpert> ready) {
        const auto t0 = std::chrono::steady_clock::now();
        run_experts(ready, ctx, x, m, std::max<int64_t>(max_users, 1));
        expert_seconds += seconds_since(t0);
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
  ctx.model.times.experts += expert_seconds;

  grow(m.shared, static_cast<size_t>(S * D));
  const std::span<float> shared(m.shared.data(), static_cast<size_t>(S * D));
  swiglu_mlp(w.shared, ctx.model.kernels, x, S, shared, ctx.model.activations ? &ctx : nullptr,
             "mlp.shared_experts");
  for (int64_t i = 0; i < S * D; ++i) out[i] += shared[i];
}

}  // namespace glmrt
