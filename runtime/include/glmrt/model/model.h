// A glm_moe_dsa model ready to run: config, resident weights, and the borrowed
// kernels plugin and expert store. The sequence's state lives in the KvCache
// the caller passes; the model keeps only buffers reused from call to call,
// counters and times, so calls on two caches must not overlap.
#pragma once

#include <glmrt/experts/expert_store.h>
#include <glmrt/kv/kv_cache.h>
#include <glmrt/model/layer_context.h>
#include <glmrt/model/model_weights.h>
#include <glmrt/model/rope.h>
#include <glmrt/weights/kernels_backend.h>

#include <functional>
#include <span>
#include <vector>

namespace glmrt {

class Model {
 public:
  Model(ModelConfig config, ModelWeights weights, ExpertStore& experts, KernelsBackend& kernels);
  Model(const Model&) = delete;  // context_ refers to its own members
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  bool has_mtp() const { return weights_.mtp.has_value(); }
  /// The cache layer holding the MTP layer's rows.
  int mtp_layer() const { return config_.num_hidden_layers; }
  /// Distinct routed experts one position selects per step, over the main
  /// layers (every MoE layer picks num_experts_per_tok distinct experts).
  int64_t experts_per_position() const;

  /// Forces one MLA form for every layer and step (automatic = the cost
  /// model's choice per chunk). Both forms compute the same attention; forcing
  /// one lets tests and `validate` check each against the oracle.
  void set_attention_form(AttentionFormChoice form) { context_.attention_form = form; }
  AttentionFormChoice attention_form() const { return context_.attention_form; }
  /// Records every layer's DSA selections and routing into `trace` (nullptr
  /// stops recording). The trace must outlive the calls that fill it.
  void set_trace(ForwardTrace* trace) { context_.trace = trace; }
  /// Shows every MoE step's routing to `observer` (nullptr: nobody). It must
  /// outlive the calls it observes.
  void set_routing_observer(RoutingObserver* observer) { context_.routing = observer; }
  /// Runs the routed experts `remote` says other processes own there
  /// (expert parallelism; nullptr: every expert runs here). It must outlive
  /// the calls that use it.
  void set_remote_experts(RemoteExperts* remote) { context_.remote = remote; }
  bool has_remote_experts() const { return context_.remote != nullptr; }
  /// Shows the input rows of every matrix product of forward(), mtp_forward()
  /// and head() to `observer` (nullptr: nobody). It must outlive those calls.
  void set_activation_observer(ActivationObserver* observer) { context_.activations = observer; }

  /// Cache-aware routing (profile `routing.cache_bias`; 0 = exact): in the
  /// forward calls a DecodeSteps marks, an MoE layer's expert already in RAM
  /// may replace a chosen one whose choice score is within `bias` of it
  /// (route_cache_biased). Never with remote experts (other processes'
  /// residency is unknown here) nor in the MTP layer.
  void set_cache_bias(float bias);
  /// The setting and its counts so far.
  const CacheBiasRouting& cache_bias() const { return cache_bias_; }
  /// Marks the forward calls made while it lives as decode or verification
  /// steps (`on` false: as prefill), restoring the mark after.
  class DecodeSteps {
   public:
    DecodeSteps(Model& model, bool on);
    DecodeSteps(const DecodeSteps&) = delete;
    DecodeSteps& operator=(const DecodeSteps&) = delete;
    ~DecodeSteps();

   private:
    Model& model_;
    bool before_;
  };

  /// Forward and MTP calls made so far (what a chunked prefill costs), and the
  /// rows they ran.
  struct Counters {
    int64_t forward_calls = 0, mtp_forward_calls = 0;
    int64_t forward_rows = 0, mtp_forward_rows = 0;
    int64_t mtp_absorbed_rows = 0;  // mtp_absorb: cache rows only
  };
  const Counters& counters() const { return counters_; }
  /// Where forward steps spent their time so far (attention, expert matmuls,
  /// next-layer prediction); waiting on disk is in the expert store's stats.
  const StepTimes& step_times() const { return times_; }

  /// A cache shaped for this model (main layers + the MTP layer).
  KvCache make_cache(CacheType type, int64_t max_tokens, MemoryBudget* budget) const;

  /// Runs S new tokens through every layer as one batched step, appending them
  /// to `cache`. Returns the last layer's hidden states [S, hidden] before the
  /// final norm. When it throws (e.g. a failed expert read) `cache` is left
  /// as it was before the call.
  std::vector<float> forward(KvCache& cache, std::span<const int32_t> tokens);

  /// One sequence's part of a step over several: its cache and its new tokens.
  struct SequenceStep {
    KvCache& cache;
    std::span<const int32_t> tokens;
  };
  /// forward() for several sequences (distinct caches) as one step: the
  /// row-wise stages (embedding, norms, the dense products, MLP, router,
  /// routed and shared experts) run over every sequence's rows stacked, so
  /// each MoE layer resolves the union of their experts once; RoPE, the
  /// attention and the DSA indexer run per sequence against its own cache.
  /// Returns the hidden states [sum of the token counts, hidden], the
  /// sequences' rows in the order of `steps`. Each sequence's rows are bit
  /// for bit what forward() gives it alone (the kernels are batch invariant)
  /// unless routing.cache_bias is on. When it throws, every cache is left as
  /// it was. A forward trace (set_trace) records one sequence only.
  std::vector<float> forward_batch(std::span<const SequenceStep> steps);

  /// forward() in calls of at most `chunk` positions (0 = one call for all),
  /// the way a long prompt is prefilled within a bounded activation memory.
  /// After each call, `on_chunk(first, hidden)` sees the call's hidden states
  /// [n, hidden] (before the final norm) for positions first..first+n-1 of
  /// `tokens`. Returns the number of calls.
  using ChunkSink = std::function<void(int64_t first, std::span<const float> hidden)>;
  int64_t forward_chunked(KvCache& cache, std::span<const int32_t> tokens, int64_t chunk,
                          const ChunkSink& on_chunk);

  /// Logits [rows, vocab] of hidden states [rows, hidden] (final norm + lm_head).
  std::vector<float> logits(std::span<const float> hidden, int64_t rows);
  /// The final norm (model.norm) of hidden states [rows, hidden]: what lm_head
  /// and the MTP layer consume.
  std::vector<float> final_norm(std::span<const float> hidden, int64_t rows) const;
  /// Logits [rows, vocab] of final-normed hidden states (lm_head alone).
  std::vector<float> head(std::span<const float> normed, int64_t rows);

  /// One MTP step for S rows (DeepSeek-V3 style): row s combines the embedding
  /// of next_tokens[s] with h[s] — the main model's hidden state after the
  /// final norm (final_norm()), or for a chained draft the MTP layer's own
  /// output before its head norm — through enorm/hnorm and eh_proj, runs the
  /// MTP layer appending rows to its cache layer, and returns the MTP hidden
  /// states [S, hidden] (before shared_head.norm). The norm is applied once:
  /// this never applies model.norm. When it throws, `cache` is left as it was.
  std::vector<float> mtp_forward(KvCache& cache, std::span<const int32_t> next_tokens,
                                 std::span<const float> h);
  /// The MTP layer's cache rows for S pairs as mtp_forward appends them, and
  /// nothing else: eh_proj, the input norm and the KV (and indexer key)
  /// projections, no attention output, no MoE (no expert is read). For pairs
  /// whose output nobody uses (verified pairs that later rows attend to).
  /// When it throws, `cache` is left as it was.
  void mtp_absorb(KvCache& cache, std::span<const int32_t> next_tokens, std::span<const float> h);
  /// Logits [rows, vocab] of MTP hidden states (shared_head norm + head).
  std::vector<float> mtp_logits(std::span<const float> hidden, int64_t rows);

 private:
  void embed(const Matrix& table, std::span<const int32_t> tokens, std::span<float> out) const;
  /// eh_proj([enorm(embed(next_tokens)); hnorm(h)]): the MTP layer's input.
  std::vector<float> mtp_input(std::span<const int32_t> next_tokens, std::span<const float> h,
                               const char* caller) const;
  /// One decoder layer for the stacked rows h [S, hidden] of `sequences`.
  void decoder_layer(const LayerWeights& w, int layer, std::span<SequenceRows> sequences,
                     std::span<float> h, int64_t S);
  /// While layer `layer`'s experts are read: predicts the experts of the next
  /// main layer when it is MoE, from h (after this layer's attention) plus
  /// this layer's shared expert output and the routed experts' output so far
  /// (either may be empty), and hands the prediction to the store (which
  /// measures it and reads ahead what its depth says).
  /// With `whole_layer`, h holds the layer's whole output (shared and
  /// routed are empty): the guess is refined.
  void prefetch_next_layer(int layer, std::span<const float> h, int64_t S,
                           std::span<const float> shared, std::span<const float> routed_so_far,
                           bool whole_layer = false);
  /// While the last main MoE layer's experts are read: guesses the next
  /// step's first MoE layer from this layer's state (see the definition)
  /// and reads it ahead. True when reads were submitted for it.
  bool prefetch_next_step(std::span<const float> h, int64_t S, std::span<const float> shared,
                          std::span<const float> routed_so_far);
  /// Experts one prediction names: a position's top-k at S = 1, else the pool.
  size_t prediction_limit(int64_t S) const;
  void find_moe_layers();
  /// With remote experts: predicts the experts of the next main layer (when
  /// it is MoE and prefetch is on) into scratch_.predicted, for the exchange
  /// to carry; returns that layer, or -1 when nothing was predicted.
  int predict_next_layer(int layer, std::span<const float> h, int64_t S);
  /// Reads ahead the predicted experts of `next` this process runs.
  void prefetch_own_share(int next, std::span<const int32_t> predicted);

  ModelConfig config_;
  ModelWeights weights_;
  ExpertStore& experts_;
  KernelsBackend& kernels_;
  Rope rope_;
  Counters counters_;
  StepTimes times_;
  CacheBiasRouting cache_bias_;
  MoeScratch scratch_;                              // reused by every MoE block and prediction
  int first_moe_layer_ = -1, last_moe_layer_ = -1;  // main layers with routed experts
  /// By main layer: the last position's attention output [hidden] of the
  /// latest call, which predicts that layer's attention in the next call.
  std::vector<float> last_attention_;
  LatentScratch latent_scratch_;  // reused by every layer's absorbed attention
  ModelContext context_;          // what every layer works with (refers to the above)
};

}  // namespace glmrt
