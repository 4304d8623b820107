#include <glmrt/model/feed_forward.h>
#include <glmrt/model/norms.h>
#include <glmrt/model/remote_experts.h>
#include <glmrt/model/routed_experts.h>
#include <glmrt/model/router.h>
#include <glmrt/weights/linear.h>

#include <algorithm>

namespace glmrt {
namespace {

template <typename T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

/// Routes every position: its experts ascending by id, with their weights.
/// Shown to the trace and the routing observer when they are set.
PositionRouting route_positions(const MoeWeights& w, const LayerCall& ctx, int64_t S,
                                std::span<const float> logits) {
  const ModelConfig& c = ctx.model.config;
  const int64_t E = c.n_routed_experts;
  const RouterParams params{static_cast<int>(E), c.num_experts_per_tok,
                            c.n_group,           c.topk_group,
                            c.norm_topk_prob,    static_cast<float>(c.routed_scaling_factor)};
  PositionRouting routed(static_cast<size_t>(S));
  const int64_t pos0 = ctx.model.trace ? ctx.cache.length(ctx.layer) - S : 0;
  // Cache-aware routing: in decode steps, on this process's main layers,
  // where the store knows what is in RAM.
  CacheBiasRouting& biased = ctx.model.cache_bias;
  const bool cache_aware = biased.applies() && !ctx.model.remote && ctx.layer < c.num_hidden_layers;
  std::vector<uint8_t> in_memory;
  if (cache_aware) {
    in_memory.resize(static_cast<size_t>(E));
    ctx.model.experts.in_memory(ctx.layer, in_memory);
  }
  for (int64_t s = 0; s < S; ++s) {
    if (cache_aware) {
      CacheBiasedChoice choice = route_cache_biased(logits.subspan(s * E, E), w.correction_bias,
                                                    params, in_memory, biased.bias);
      biased.choices += static_cast<int64_t>(choice.chosen.size());
      biased.substitutions += choice.substitutions;
      routed[s] = std::move(choice.chosen);
    } else {
      routed[s] = route(logits.subspan(s * E, E), w.correction_bias, params);
    }
    std::sort(routed[s].begin(), routed[s].end(),
              [](const RoutedExpert& a, const RoutedExpert& b) { return a.expert < b.expert; });
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
  return routed;
}

/// The experts of `routing` that run in this process.
PositionRouting local_share(const PositionRouting& routing, const RemoteExperts& remote,
                            int layer) {
  PositionRouting local(routing.size());
  for (size_t s = 0; s < routing.size(); ++s)
    for (const RoutedExpert& r : routing[s])
      if (remote.runs_here(layer, r.expert)) local[s].push_back(r);
  return local;
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
               std::span<float> out, const SharedExpertReady& reads_queued,
               const NextLayerPrediction& next) {
  MoeScratch& m = ctx.model.moe_scratch;
  const int64_t D = ctx.model.config.hidden_size, E = ctx.model.config.n_routed_experts;
  grow(m.logits, static_cast<size_t>(S * E));
  const std::span<float> logits(m.logits.data(), static_cast<size_t>(S * E));
  linear(ctx.model.kernels, x, S, w.router, logits);
  const PositionRouting routing = route_positions(w, ctx, S, logits);
  const RoutedExpertsCall call{ctx.model.config, ctx.model.kernels,    ctx.model.experts, m,
                               ctx.layer,        ctx.model.activations};
  grow(m.shared, static_cast<size_t>(S * D));
  const std::span<float> shared(m.shared.data(), static_cast<size_t>(S * D));
  // The shared expert is computed while the routed experts' reads are in
  // flight, and its output helps predict the next layer's experts.
  bool shared_done = false;
  const auto shared_expert = [&](std::span<const float> routed_so_far) {
    if (shared_done) return;
    shared_done = true;
    swiglu_mlp(w.shared, ctx.model.kernels, x, S, shared, ctx.model.activations ? &ctx : nullptr,
               "mlp.shared_experts");
    if (reads_queued) reads_queued(shared, routed_so_far);
  };
  if (RemoteExperts* remote = ctx.model.remote) {
    // The other ranks start on their experts while this one runs its own;
    // their sums are added after, rank by rank.
    remote->send_step(ctx.layer, x.first(static_cast<size_t>(S * D)), routing, next.layer,
                      next.experts);
    ctx.model.times.experts +=
        routed_expert_sum(call, x, local_share(routing, *remote, ctx.layer), out, shared_expert);
    shared_expert({});  // when this rank had no experts of its own to queue
    remote->add_results(out.first(static_cast<size_t>(S * D)));
  } else {
    ctx.model.times.experts += routed_expert_sum(call, x, routing, out, shared_expert);
    shared_expert({});
  }
  for (int64_t i = 0; i < S * D; ++i) out[i] += shared[i];
}

}  // namespace glmrt
