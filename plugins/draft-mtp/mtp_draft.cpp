#include "mtp_draft.h"

#include "draft_distribution.h"

#include <setting_values.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace glmrt::draft_mtp {

bool parse_settings(const glmrt_setting* settings, size_t n_settings, MtpSettings& out,
                    std::string& error) {
  for (size_t i = 0; i < n_settings; ++i) {
    const std::string_view key = plugin_support::setting_text(settings[i].key);
    const std::string value(plugin_support::setting_text(settings[i].value));
    if (key == "p_min") {
      char* end = nullptr;
      const float p = std::strtof(value.c_str(), &end);
      if (value.empty() || end != value.c_str() + value.size() || !(p >= 0.0f && p <= 1.0f)) {
        error = plugin_support::bad_setting(MtpDraft::kName, key, "a number from 0 to 1", value);
        return false;
      }
      out.p_min = p;
    } else {
      error = plugin_support::unknown_setting(MtpDraft::kName, key, "p_min");
      return false;
    }
  }
  return true;
}

MtpDraft::MtpDraft(const glmrt_host_services& host, MtpSettings settings)
    : settings_(settings), scratch_(host) {}

glmrt_status MtpDraft::refuse(glmrt_status status, const char* message) noexcept {
  std::snprintf(error_, sizeof(error_), "%s: %s", kName, message);
  return status;
}

glmrt_status MtpDraft::propose(plugin::DraftHost& host, const glmrt_draft_request* request,
                               glmrt_draft_proposal* proposal) noexcept {
  if (!request || !proposal || !request->history || request->n_history < 1 ||
      request->max_tokens < 1 || proposal->max_tokens < request->max_tokens || !proposal->tokens ||
      !proposal->q_size || !proposal->q_tokens || !proposal->q_probs || !request->uniforms)
    return refuse(GLMRT_ERR_INVALID_ARGUMENT, "propose: a malformed request or proposal");
  proposal->n_tokens = 0;
  const int64_t n = request->n_history;
  if (n < 2) return GLMRT_OK;  // no main-model state to draft from yet
  if (!host.has_mtp())
    return refuse(GLMRT_ERR_UNSUPPORTED, "the checkpoint has no MTP layer to draft with");
  const int32_t D = host.hidden_size(), V = host.vocab_size();
  if (proposal->q_capacity < V)
    return refuse(GLMRT_ERR_INVALID_ARGUMENT, "propose: q_capacity is below the vocabulary size");
  const size_t bytes = sizeof(float) * (2 * static_cast<size_t>(D) + V) +
                       sizeof(int32_t) * 2 * static_cast<size_t>(V) + sizeof(uint8_t) * V;
  if (!scratch_.reserve(bytes))
    return refuse(GLMRT_ERR_OUT_OF_MEMORY, "the host refused scratch memory");
  float* h = reinterpret_cast<float*>(scratch_.data());
  float* h_out = h + D;
  float* logits = h_out + D;
  int32_t* order = reinterpret_cast<int32_t*>(logits + V);
  const TokenCounts counts{reinterpret_cast<uint8_t*>(order + 2 * V), order + V};
  // The host's penalties, so that a penalised greedy host accepts the drafts.
  const Penalties penalties = Penalties::of(*request);
  const bool penalised = penalties.any();
  if (penalised) count_history(*request, V, counts);

  if (host.last_hidden(h) != GLMRT_OK) return refuse(GLMRT_ERR_INTERNAL, host.last_error());
  const bool greedy = request->temperature <= 0.0f;
  int32_t token = request->history[n - 1];
  int32_t drafted = 0;
  for (; drafted < request->max_tokens; ++drafted) {
    if (host.run_mtp(token, n - 2 + drafted, h, h_out, logits) != GLMRT_OK)
      return refuse(GLMRT_ERR_INTERNAL, host.last_error());
    if (penalised) apply_penalties(logits, V, counts, penalties);
    if (settings_.p_min > 0.0f && top_probability(logits, V) < settings_.p_min) break;
    int32_t* ids = proposal->q_tokens + static_cast<size_t>(drafted) * proposal->q_capacity;
    float* probs = proposal->q_probs + static_cast<size_t>(drafted) * proposal->q_capacity;
    if (greedy) {
      token = argmax(logits, V);
      proposal->q_size[drafted] = 0;  // one-hot
    } else {
      const int32_t count = shape_distribution(logits, V, *request, order, ids, probs);
      token = ids[draw(probs, count, request->uniforms[drafted])];
      proposal->q_size[drafted] = count;
    }
    proposal->tokens[drafted] = token;
    if (penalised) counts.add(token);  // later drafts see it as history and answer
    std::swap(h, h_out);               // chain on the MTP output, before shared_head.norm
  }
  proposal->n_tokens = drafted;
  return GLMRT_OK;
}

}  // namespace glmrt::draft_mtp
