#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/model/attention.h>
#include <glmrt/model/expert_prediction.h>
#include <glmrt/model/feed_forward.h>
#include <glmrt/model/model.h>
#include <glmrt/model/norms.h>
#include <glmrt/weights/linear.h>

#include <algorithm>
#include <chrono>

namespace glmrt {

Model::Model(ModelConfig config, ModelWeights weights, ExpertStore& experts,
             KernelsBackend& kernels)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      experts_(experts),
      kernels_(kernels),
      rope_(config_.qk_rope_head_dim, config_.rope_theta) {}

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

void Model::prefetch_next_layer(int layer, std::span<const float> h, int64_t S) {
  const int next = layer + 1;
  if (experts_.sizes().prefetch <= 0 || next >= config_.num_hidden_layers) return;
  const LayerWeights& w = weights_.layers[next];
  if (w.mlp_kind != MlpKind::sparse) return;
  const auto t0 = std::chrono::steady_clock::now();
  // One position's choices; for a longer step, as many as the pool holds.
  const size_t limit = S == 1 ? static_cast<size_t>(config_.num_experts_per_tok)
                              : static_cast<size_t>(experts_.pool_capacity());
  predict_experts(w, config_, kernels_, h, S, limit, scratch_);
  experts_.prefetch(next, scratch_.predicted);
  times_.predict += seconds_since(t0);
}

void Model::decoder_layer(const LayerWeights& w, int layer, KvCache& cache, std::span<float> h,
                          int64_t S, KeySelection& selection) {
  const int64_t D = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  const LayerContext ctx{config_,         kernels_, rope_,     cache,   experts_,         layer,
                         attention_form_, trace_,   &scratch_, &times_, &latent_scratch_, routing_,
                         activations_};
  std::vector<float> normed(S * D), delta(S * D);

  const auto t0 = std::chrono::steady_clock::now();
  rms_norm_rows(h, w.input_norm, eps, normed);
  mla_attention(w.attention, ctx, normed, S, selection, delta);
  for (int64_t i = 0; i < S * D; ++i) h[i] += delta[i];
  times_.attention += seconds_since(t0);

  rms_norm_rows(h, w.post_attention_norm, eps, normed);
  // The MTP layer (index num_hidden_layers) predicts nothing: no layer follows.
  const bool main_layer = layer < config_.num_hidden_layers;
  if (w.mlp_kind == MlpKind::dense) {
    if (main_layer) prefetch_next_layer(layer, h, S);
    swiglu_mlp(w.dense, kernels_, normed, S, delta, ctx.activations ? &ctx : nullptr, "mlp");
  } else {
    // The next layer's reads queue behind this layer's own.
    moe_block(w.moe, ctx, normed, S, delta, [&] {
      if (main_layer) prefetch_next_layer(layer, h, S);
    });
  }
  for (int64_t i = 0; i < S * D; ++i) h[i] += delta[i];
}

std::vector<float> Model::forward(KvCache& cache, std::span<const int32_t> tokens) {
  const int64_t S = static_cast<int64_t>(tokens.size());
  std::vector<float> h(S * config_.hidden_size);
  KvRollback rollback(cache);
  embed(weights_.embed, tokens, h);
  KeySelection selection;
  for (int i = 0; i < config_.num_hidden_layers; ++i)
    decoder_layer(weights_.layers[i], i, cache, h, S, selection);
  rollback.commit();
  ++counters_.forward_calls;
  counters_.forward_rows += S;
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
  observe_input(activations_, {-1, -1, {}, "lm_head.weight"},
                normed.first(rows * config_.hidden_size), rows);
  linear(kernels_, normed.first(rows * config_.hidden_size), rows, weights_.lm_head, out);
  return out;
}

int64_t Model::experts_per_position() const {
  int64_t moe_layers = 0;
  for (const LayerWeights& layer : weights_.layers) moe_layers += layer.mlp_kind == MlpKind::sparse;
  return moe_layers * config_.num_experts_per_tok;
}

std::vector<float> Model::mtp_input(std::span<const int32_t> next_tokens,
                                    std::span<const float> h_in, const char* caller) const {
  if (!weights_.mtp) fail("this checkpoint has no MTP layer");
  const MtpWeights& m = *weights_.mtp;
  const int64_t S = static_cast<int64_t>(next_tokens.size()), D = config_.hidden_size;
  if (static_cast<int64_t>(h_in.size()) < S * D)
    fail("{}: {} tokens need {} hidden values, got {}", caller, S, S * D, h_in.size());
  const float eps = static_cast<float>(config_.rms_norm_eps);
  std::vector<float> e(S * D), joined(S * 2 * D), h(S * D);
  embed(weights_.mtp_embed(), next_tokens, e);
  for (int64_t s = 0; s < S; ++s) {
    float* row = joined.data() + s * 2 * D;
    rms_norm({e.data() + s * D, static_cast<size_t>(D)}, m.enorm, eps,
             {row, static_cast<size_t>(D)});
    rms_norm(h_in.subspan(s * D, D), m.hnorm, eps, {row + D, static_cast<size_t>(D)});
  }
  observe_input(activations_, {mtp_layer(), -1, {}, "eh_proj.weight"}, joined, S);
  linear(kernels_, joined, S, m.eh_proj, h);
  return h;
}

std::vector<float> Model::mtp_forward(KvCache& cache, std::span<const int32_t> next_tokens,
                                      std::span<const float> h_in) {
  const int64_t S = static_cast<int64_t>(next_tokens.size());
  std::vector<float> h = mtp_input(next_tokens, h_in, "mtp_forward");
  const MtpWeights& m = *weights_.mtp;
  KvRollback rollback(cache);
  KeySelection selection;
  decoder_layer(m.layer, mtp_layer(), cache, h, S, selection);
  rollback.commit();
  ++counters_.mtp_forward_calls;
  counters_.mtp_forward_rows += S;
  return h;
}

void Model::mtp_absorb(KvCache& cache, std::span<const int32_t> next_tokens,
                       std::span<const float> h_in) {
  const int64_t S = static_cast<int64_t>(next_tokens.size()), D = config_.hidden_size;
  if (S == 0) return;
  const std::vector<float> h = mtp_input(next_tokens, h_in, "mtp_absorb");
  const MtpWeights& m = *weights_.mtp;
  const LayerContext ctx{config_,  kernels_,    rope_,           cache,
                         experts_, mtp_layer(), attention_form_, trace_};
  std::vector<float> normed(S * D);
  rms_norm_rows(h, m.layer.input_norm, static_cast<float>(config_.rms_norm_eps), normed);
  KvRollback rollback(cache);
  mla_cache_rows(m.layer.attention, ctx, normed, S);
  rollback.commit();
  counters_.mtp_absorbed_rows += S;
}

std::vector<float> Model::mtp_logits(std::span<const float> hidden, int64_t rows) {
  const MtpWeights& m = *weights_.mtp;
  const int64_t D = config_.hidden_size;
  std::vector<float> normed(rows * D), out(rows * config_.vocab_size);
  rms_norm_rows(hidden.first(rows * D), m.head_norm, static_cast<float>(config_.rms_norm_eps),
                normed);
  linear(kernels_, normed, rows, weights_.mtp_head(), out);
  return out;
}

}  // namespace glmrt
