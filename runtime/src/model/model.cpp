#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/model/attention.h>
#include <glmrt/model/feed_forward.h>
#include <glmrt/model/model.h>
#include <glmrt/model/norms.h>
#include <glmrt/model/remote_experts.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

namespace glmrt {

Model::Model(ModelConfig config, ModelWeights weights, ExpertStore& experts,
             KernelsBackend& kernels)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      experts_(experts),
      kernels_(kernels),
      rope_(config_.qk_rope_head_dim, config_.rope),
      last_attention_(static_cast<size_t>(config_.num_hidden_layers * config_.hidden_size), 0.f),
      context_{config_, kernels_, rope_, experts_, scratch_, latent_scratch_, times_, cache_bias_} {
  find_moe_layers();
}

void Model::set_cache_bias(float bias) {
  if (!(bias >= 0.f) || !std::isfinite(bias))
    fail("routing.cache_bias: {} (expected a finite number >= 0)", bias);
  cache_bias_.bias = bias;
}

Model::DecodeSteps::DecodeSteps(Model& model, bool on)
    : model_(model), before_(model.cache_bias_.decode_step) {
  model_.cache_bias_.decode_step = on;
}

Model::DecodeSteps::~DecodeSteps() {
  model_.cache_bias_.decode_step = before_;
}

KvCache Model::make_cache(CacheType type, int64_t max_tokens, MemoryBudget* budget) const {
  KvCacheShape shape;
  shape.n_layers = config_.num_hidden_layers + 1;
  shape.kv_width = config_.kv_lora_rank + config_.qk_rope_head_dim;
  shape.index_key_width = config_.index_head_dim;
  for (int i = 0; i < shape.n_layers; ++i)
    shape.has_index_keys.push_back(config_.indexer_kind(i) == IndexerKind::full);
  return KvCache(std::move(shape), type, max_tokens, budget);
}

void Model::embed(const Matrix& table, std::span<const int32_t> tokens,
                  std::span<float> out) const {
  const int64_t D = config_.hidden_size;
  for (size_t s = 0; s < tokens.size(); ++s) {
    if (tokens[s] < 0 || tokens[s] >= table.rows())
      fail("token id {} is outside the vocabulary (0..{})", tokens[s], table.rows() - 1);
    table.dequantize_row(tokens[s], out.subspan(s * D, D));
  }
}

// One decoder layer for S new positions (of one sequence or several
// stacked), as transformers' decoder layer: h += attention(input_norm(h));
// h += mlp(post_attention_norm(h)), the MLP dense or the MoE block. While
// this layer's experts arrive, the next layer's are predicted from h and
// read ahead behind them.
void Model::decoder_layer(const LayerWeights& w, int layer, std::span<SequenceRows> sequences,
                          std::span<float> h, int64_t S) {
  const int64_t D = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  std::vector<float> normed(S * D), delta(S * D);

  const auto t0 = std::chrono::steady_clock::now();
  rms_norm_rows(h, w.input_norm, eps, normed);
  mla_attention(w.attention, context_, layer, sequences, normed, S, delta);
  for (int64_t i = 0; i < S * D; ++i) h[i] += delta[i];
  times_.attention += seconds_since(t0);
  if (layer < config_.num_hidden_layers)
    std::copy_n(delta.begin() + (S - 1) * D, D, last_attention_.begin() + layer * D);

  rms_norm_rows(h, w.post_attention_norm, eps, normed);
  // The MLP runs over every row at once; its cache names the positions a
  // forward trace records (forward_batch traces one sequence only).
  const LayerCall call{context_, sequences.front().cache, layer};
  // The MTP layer (index num_hidden_layers) reads nothing ahead: no layer
  // follows. The last main MoE layer guesses the next step's first one.
  const bool main_layer = call.layer < config_.num_hidden_layers;
  bool next_step_reads = false;
  const auto read_next_layer_ahead = [&](std::span<const float> shared,
                                         std::span<const float> routed_so_far) {
    if (!main_layer) return;
    prefetch_next_layer(call.layer, h, S, shared, routed_so_far);
    if (call.layer == last_moe_layer_ && !context_.remote)
      next_step_reads = prefetch_next_step(h, S, shared, routed_so_far);
  };
  if (w.mlp_kind == MlpKind::dense) {
    read_next_layer_ahead({}, {});
    swiglu_mlp(w.dense, kernels_, normed, S, delta, &call, "mlp");
  } else if (!context_.remote || call.layer >= config_.num_hidden_layers) {
    moe_block(w.moe, call, normed, S, delta, read_next_layer_ahead);
  } else {
    // The prediction travels with the exchange so the other ranks read
    // ahead too; this rank reads its own share once its reads are queued.
    const int next = predict_next_layer(call.layer, h, S);
    const std::vector<int32_t> predicted = next >= 0 ? scratch_.predicted : std::vector<int32_t>{};
    moe_block(w.moe, call, normed, S, delta,
              [&](std::span<const float>, std::span<const float>) {
                if (next >= 0) prefetch_own_share(next, predicted);
              },
              {next, predicted});
  }
  for (int64_t i = 0; i < S * D; ++i) h[i] += delta[i];
  if (!main_layer || context_.remote) return;
  // The guess made while this layer's experts were read, refined now that
  // the whole MLP output is known: the next layer's reads not yet started
  // still have its attention to land in.
  prefetch_next_layer(call.layer, h, S, {}, {}, /*whole_layer=*/true);
  if (call.layer == last_moe_layer_) experts_.step_reads_done(next_step_reads);
}

// The model for S new tokens: embedding, every decoder layer (a layer whose
// indexer is shared reuses the previous layer's DSA selection), appended to
// the cache all or nothing. The final norm and lm_head are logits().
std::vector<float> Model::forward(KvCache& cache, std::span<const int32_t> tokens) {
  const SequenceStep step[] = {{cache, tokens}};
  return forward_batch(step);
}

std::vector<float> Model::forward_batch(std::span<const SequenceStep> steps) {
  if (steps.empty()) fail("forward_batch: no sequence to run");
  if (context_.trace && steps.size() > 1)
    fail("forward_batch: a forward trace records one sequence, the step has {}", steps.size());
  const int64_t D = config_.hidden_size;
  std::vector<SequenceRows> sequences;
  sequences.reserve(steps.size());
  int64_t S = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const SequenceStep& step = steps[i];
    const int64_t n = static_cast<int64_t>(step.tokens.size());
    if (n == 0) fail("forward_batch: sequence {} of the step has no tokens", i);
    for (size_t j = 0; j < i; ++j)
      if (&steps[j].cache == &step.cache)
        fail("forward_batch: sequences {} and {} of the step share one cache", j, i);
    if (steps.size() > 1 && step.cache.length(0) + n > step.cache.max_tokens())
      fail(
          "context full: sequence {} of the step: {} tokens do not fit memory.max_context = {} "
          "of the profile",
          i, step.cache.length(0) + n, step.cache.max_tokens());
    sequences.push_back({step.cache, S, n});
    S += n;
  }
  std::vector<float> h(S * D);
  // All or nothing, for every sequence.
  std::deque<KvRollback> rollbacks;
  for (const SequenceStep& step : steps) rollbacks.emplace_back(step.cache);
  for (size_t i = 0; i < steps.size(); ++i)
    embed(weights_.embed, steps[i].tokens,
          std::span(h).subspan(sequences[i].first * D, sequences[i].count * D));
  for (int i = 0; i < config_.num_hidden_layers; ++i)
    decoder_layer(weights_.layers[i], i, sequences, h, S);
  for (KvRollback& rollback : rollbacks) rollback.commit();
  ++counters_.forward_calls;
  counters_.forward_rows += S;
  if (cache_bias_.applies() && !context_.remote) cache_bias_.rows += S;
  return h;
}

int64_t Model::forward_chunked(KvCache& cache, std::span<const int32_t> tokens, int64_t chunk,
                               const ChunkSink& on_chunk) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  const int64_t step = chunk > 0 ? chunk : std::max<int64_t>(T, 1);
  int64_t calls = 0;
  for (int64_t first = 0; first < T; first += step, ++calls) {
    const int64_t n = std::min(step, T - first);
    const std::vector<float> hidden = forward(cache, tokens.subspan(first, n));
    if (on_chunk) on_chunk(first, hidden);
  }
  return calls;
}

std::vector<float> Model::logits(std::span<const float> hidden, int64_t rows) {
  return head(final_norm(hidden, rows), rows);
}

std::vector<float> Model::final_norm(std::span<const float> hidden, int64_t rows) const {
  const int64_t D = config_.hidden_size;
  std::vector<float> normed(rows * D);
  rms_norm_rows(hidden.first(rows * D), weights_.final_norm,
                static_cast<float>(config_.rms_norm_eps), normed);
  return normed;
}

std::vector<float> Model::head(std::span<const float> normed, int64_t rows) {
  std::vector<float> out(rows * config_.vocab_size);
  observe_input(context_.activations, {-1, -1, {}, "lm_head.weight"},
                normed.first(rows * config_.hidden_size), rows);
  // Only sampling reads the logits: the plugin may take its fastest
  // activation rounding here (kernels-avx2's `logits` setting).
  linear(kernels_, normed.first(rows * config_.hidden_size), rows, weights_.lm_head, out,
         GLMRT_PRODUCT_LOGITS);
  return out;
}

int64_t Model::experts_per_position() const {
  int64_t moe_layers = 0;
  for (const LayerWeights& layer : weights_.layers) moe_layers += layer.mlp_kind == MlpKind::sparse;
  return moe_layers * config_.num_experts_per_tok;
}

}  // namespace glmrt
