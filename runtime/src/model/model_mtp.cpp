// The multi-token-prediction layer (DeepSeek-V3 style): the next token's
// embedding joined with the main model's state through eh_proj, one decoder
// layer with its own cache row, its own head norm.
#include <glmrt/base/error.h>
#include <glmrt/model/attention.h>
#include <glmrt/model/model.h>
#include <glmrt/model/norms.h>
#include <glmrt/weights/linear.h>

namespace glmrt {

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
  observe_input(context_.activations, {mtp_layer(), -1, {}, "eh_proj.weight"}, joined, S);
  linear(kernels_, joined, S, m.eh_proj, h);
  return h;
}

std::vector<float> Model::mtp_forward(KvCache& cache, std::span<const int32_t> next_tokens,
                                      std::span<const float> h_in) {
  const int64_t S = static_cast<int64_t>(next_tokens.size());
  std::vector<float> h = mtp_input(next_tokens, h_in, "mtp_forward");
  const MtpWeights& m = *weights_.mtp;
  KvRollback rollback(cache);
  SequenceRows rows[] = {{cache, 0, S}};
  decoder_layer(m.layer, mtp_layer(), rows, h, S);
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
  // Rows nobody reads the output of: their inputs are not observed (they
  // were, as the main model's, or will be when a draft runs the layer).
  ModelContext unobserved = context_;
  unobserved.activations = nullptr;
  unobserved.routing = nullptr;
  std::vector<float> normed(S * D);
  rms_norm_rows(h, m.layer.input_norm, static_cast<float>(config_.rms_norm_eps), normed);
  KvRollback rollback(cache);
  mla_cache_rows(m.layer.attention, {unobserved, cache, mtp_layer()}, normed, S);
  rollback.commit();
  counters_.mtp_absorbed_rows += S;
}

std::vector<float> Model::mtp_logits(std::span<const float> hidden, int64_t rows) {
  const MtpWeights& m = *weights_.mtp;
  const int64_t D = config_.hidden_size;
  std::vector<float> normed(rows * D), out(rows * config_.vocab_size);
  rms_norm_rows(hidden.first(rows * D), m.head_norm, static_cast<float>(config_.rms_norm_eps),
                normed);
  // Draft logits: only the drafter's sampling reads them (Model::head says why).
  linear(kernels_, normed, rows, weights_.mtp_head(), out, GLMRT_PRODUCT_LOGITS);
  return out;
}

}  // namespace glmrt
