#include <glmrt/base/elapsed_time.h>
#include <glmrt/model/activation_observer.h>
#include <glmrt/model/norms.h>
#include <glmrt/model/routed_experts.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <chrono>

#include <omp.h>

namespace glmrt {
namespace {

template <typename T>
void grow_scratch(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

/// Groups the positions by the experts they chose: ids ascending, each
/// expert's users in position order, and each position's users in the order
/// of its routing (ascending expert id: the order the reference sums them in).
void group_by_expert(const PositionRouting& routing, int64_t E, MoeScratch& m) {
  const int64_t S = static_cast<int64_t>(routing.size());
  m.count.assign(static_cast<size_t>(E), 0);
  for (const auto& position : routing)
    for (const RoutedExpert& r : position) ++m.count[static_cast<size_t>(r.expert)];
  m.ids.clear();
  m.first_user.assign(static_cast<size_t>(E) + 1, 0);
  for (int64_t e = 0; e < E; ++e) {
    if (m.count[e]) m.ids.push_back(static_cast<int32_t>(e));
    m.first_user[e + 1] = m.first_user[e] + m.count[e];
  }
  const size_t users = static_cast<size_t>(m.first_user[E]);
  grow_scratch(m.user_position, users);
  grow_scratch(m.user_weight, users);
  grow_scratch(m.position_users, users);
  m.position_first.assign(static_cast<size_t>(S) + 1, 0);
  std::fill(m.count.begin(), m.count.end(), 0);
  for (int64_t s = 0; s < S; ++s) {
    const auto& position = routing[s];
    m.position_first[s + 1] = m.position_first[s] + static_cast<int64_t>(position.size());
    for (size_t j = 0; j < position.size(); ++j) {
      const RoutedExpert& r = position[j];
      const int64_t u = m.first_user[r.expert] + m.count[r.expert]++;
      m.user_position[u] = s;
      m.user_weight[u] = r.weight;
      m.position_users[m.position_first[s] + static_cast<int64_t>(j)] = u;
    }
  }
}

/// The ready experts of a batch, a few at a time: each expert's users'
/// rows gathered (a single user's row is used where it is), gate and up of
/// every expert in one grouped call, SwiGLU, then every down projection in
/// one grouped call straight into the users' contribution rows. The experts
/// of one call hold at most `max_users` users' rows, so a long prefill's
/// buffers stay a few positions' worth per thread.
void run_experts(std::span<const ExpertStore::ReadyExpert> ready, const RoutedExpertsCall& call,
                 std::span<const float> x, MoeScratch& m, int64_t max_users) {
  const int64_t D = call.config.hidden_size;
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
    grow_scratch(m.expert_rows, static_cast<size_t>(users * D));
    grow_scratch(m.expert_gate, static_cast<size_t>(users * widest));
    grow_scratch(m.expert_up, static_cast<size_t>(users * widest));
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
      observe_input(call.activations, {call.layer, id, {}, "gate_proj.weight"}, input, n);
      observe_input(call.activations, {call.layer, id, {}, "up_proj.weight"}, input, n);
      m.products.push_back(
          matmul_product(rows, n, 0, e.gate, m.expert_gate.data() + offset * widest, 0));
      m.products.push_back(
          matmul_product(rows, n, 0, e.up, m.expert_up.data() + offset * widest, 0));
      offset += n;
    }
    call.kernels.grouped_matmul(m.products);
    m.products.clear();
    offset = 0;
    for (size_t k = begin; k < end; ++k) {
      const Expert& e = *ready[k].expert;
      const int32_t id = m.ids[ready[k].index];
      const int64_t first = m.first_user[id], n = m.first_user[id + 1] - first;
      float* gate = m.expert_gate.data() + offset * widest;
      const float* up = m.expert_up.data() + offset * widest;
      for (int64_t i = 0; i < n * e.gate.rows; ++i) gate[i] = silu(gate[i]) * up[i];
      observe_input(call.activations, {call.layer, id, {}, "down_proj.weight"},
                    std::span<const float>(gate, static_cast<size_t>(n * e.gate.rows)), n);
      m.products.push_back(
          matmul_product(gate, n, 0, e.down, m.contributions.data() + first * D, 0));
      offset += n;
    }
    call.kernels.grouped_matmul(m.products);
    begin = end;
  }
}

/// Each position's weighted sum over the users marked done, into out.
void sum_routed_rows(const MoeScratch& m, int64_t S, int64_t D, bool done_only,
                     std::span<float> out) {
  for (int64_t s = 0; s < S; ++s) {
    float* o = out.data() + s * D;
    std::fill(o, o + D, 0.f);
    for (int64_t j = m.position_first[s]; j < m.position_first[s + 1]; ++j) {
      const int64_t u = m.position_users[j];
      if (done_only && !m.user_done[u]) continue;
      const float wgt = m.user_weight[u];
      const float* y = m.contributions.data() + u * D;
      for (int64_t d = 0; d < D; ++d) o[d] += wgt * y[d];
    }
  }
}

}  // namespace

double routed_expert_sum(const RoutedExpertsCall& call, std::span<const float> x,
                         const PositionRouting& routing, std::span<float> out,
                         const RoutedSoFar& reads_queued) {
  MoeScratch& m = call.scratch;
  const int64_t S = static_cast<int64_t>(routing.size());
  const int64_t D = call.config.hidden_size, E = call.config.n_routed_experts;
  group_by_expert(routing, E, m);
  grow_scratch(m.contributions, static_cast<size_t>(m.first_user[E] * D));
  m.user_done.assign(static_cast<size_t>(m.first_user[E]), 0);

  double expert_seconds = 0;
  // Per grouped call: every user of the step, but at most a few positions'
  // worth per thread (the memory plan counts kGroupedExpertRows).
  const int64_t max_users =
      std::min<int64_t>(m.first_user[E], std::max<int64_t>(S, kGroupedExpertRows) *
                                             std::max(omp_get_max_threads(), 1));
  const auto queued = [&] {
    if (!reads_queued) return;
    sum_routed_rows(m, S, D, /*done_only=*/true, out);
    reads_queued(out.first(static_cast<size_t>(S * D)));
  };
  call.experts.run_step_batches(
      call.layer, m.ids, queued, [&](std::span<const ExpertStore::ReadyExpert> ready) {
        const auto t0 = std::chrono::steady_clock::now();
        run_experts(ready, call, x, m, std::max<int64_t>(max_users, 1));
        for (const ExpertStore::ReadyExpert& r : ready) {
          const int32_t id = m.ids[r.index];
          std::fill(m.user_done.begin() + m.first_user[id],
                    m.user_done.begin() + m.first_user[id + 1], uint8_t{1});
        }
        expert_seconds += seconds_since(t0);
      });

  // Each position sums its experts in the order of its routing.
  sum_routed_rows(m, S, D, /*done_only=*/false, out);
  return expert_seconds;
}

}  // namespace glmrt
