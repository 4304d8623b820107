#include "test_drafters.h"

#include <algorithm>

namespace glmrt::test_support {

glmrt_status ScriptedDrafter::propose(plugin::DraftHost&, const glmrt_draft_request* request,
                                      glmrt_draft_proposal* proposal) noexcept {
  proposal->n_tokens = 0;
  const int64_t n = request->n_history;
  if (n > static_cast<int64_t>(script_.size()) ||
      !std::equal(request->history, request->history + n, script_.begin()))
    return GLMRT_OK;
  for (int32_t j = 0; j < request->max_tokens && n + j < static_cast<int64_t>(script_.size());
       ++j) {
    int32_t token = script_[n + j];
    if (wrong_every_ > 0 && ++drafted_ % wrong_every_ == 0) token = (token + 1) % vocab_;
    proposal->tokens[j] = token;
    proposal->q_size[j] = 0;
    proposal->n_tokens = j + 1;
  }
  return GLMRT_OK;
}

glmrt_status RandomQDrafter::propose(plugin::DraftHost&, const glmrt_draft_request* request,
                                     glmrt_draft_proposal* proposal) noexcept {
  ++calls_;
  for (int32_t j = 0; j < request->max_tokens; ++j) {
    int32_t* ids = proposal->q_tokens + static_cast<size_t>(j) * proposal->q_capacity;
    float* probs = proposal->q_probs + static_cast<size_t>(j) * proposal->q_capacity;
    // Weights 1..7 scattered over the vocabulary by the call and position.
    float total = 0.f;
    for (int32_t t = 0; t < vocab_; ++t) {
      ids[t] = t;
      probs[t] = static_cast<float>(1 + (t * 5 + calls_ * 3 + j) % 7);
      total += probs[t];
    }
    double u = request->uniforms[j] * total;
    int32_t pick = vocab_ - 1;
    for (int32_t t = 0; t < vocab_; ++t) {
      if (u < probs[t]) {
        pick = t;
        break;
      }
      u -= probs[t];
    }
    for (int32_t t = 0; t < vocab_; ++t) probs[t] /= total;
    proposal->tokens[j] = pick;
    proposal->q_size[j] = vocab_;
  }
  proposal->n_tokens = request->max_tokens;
  return GLMRT_OK;
}

}  // namespace glmrt::test_support
