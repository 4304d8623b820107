#include "ngram_draft.h"

#include <setting_values.h>

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace glmrt::draft_ngram {

bool parse_settings(const glmrt_setting* settings, size_t n_settings, NgramSettings& out,
                    std::string& error) {
  using plugin_support::bad_setting, plugin_support::parse_integer, plugin_support::setting_text;
  for (size_t i = 0; i < n_settings; ++i) {
    const std::string_view key = setting_text(settings[i].key);
    const std::string_view value = setting_text(settings[i].value);
    if (key == "min_n") {
      if (!parse_integer(value, 0, 16, out.min_n)) {
        error = bad_setting(NgramDraft::kName, key, "an integer from 0 to 16", value);
        return false;
      }
    } else if (key == "max_n") {
      if (!parse_integer(value, 1, 16, out.max_n)) {
        error = bad_setting(NgramDraft::kName, key, "an integer from 1 to 16", value);
        return false;
      }
    } else {
      error = plugin_support::unknown_setting(NgramDraft::kName, key, "min_n, max_n");
      return false;
    }
  }
  if (out.min_n > out.max_n) {
    error = std::string(NgramDraft::kName) + ": min_n (" + std::to_string(out.min_n) +
            ") exceeds max_n (" + std::to_string(out.max_n) + ")";
    return false;
  }
  return true;
}

NgramDraft::NgramDraft(const glmrt_host_services& host, NgramSettings settings)
    : settings_(settings), index_(host, settings.min_n, settings.max_n) {}

glmrt_status NgramDraft::refuse(glmrt_status status, const char* message) noexcept {
  std::snprintf(error_, sizeof(error_), "%s: %s", kName, message);
  return status;
}

int64_t NgramDraft::continuation(const int32_t* history, int64_t n_history) const noexcept {
  const int64_t last = n_history - 1;
  for (int n = settings_.max_n; n >= std::max(settings_.min_n, 1); --n) {
    const int64_t end = index_.find(history, last, n);
    if (end >= 0) return end + 1;
  }
  // The empty n-gram's most recent earlier occurrence ends just before the
  // last token: what followed it is the last token.
  return settings_.min_n == 0 ? last : -1;
}

glmrt_status NgramDraft::propose(plugin::DraftHost&, const glmrt_draft_request* request,
                                 glmrt_draft_proposal* proposal) noexcept {
  if (!request || !proposal || !request->history || request->n_history < 1 ||
      request->max_tokens < 1 || proposal->max_tokens < request->max_tokens || !proposal->tokens ||
      !proposal->q_size)
    return refuse(GLMRT_ERR_INVALID_ARGUMENT, "propose: a malformed request or proposal");
  const int32_t* history = request->history;
  const int64_t n = request->n_history;
  proposal->n_tokens = 0;
  // Every n-gram ending before the last token: the last one's own occurrence
  // is the query, not a match.
  if (!index_.extend(history, n - 1))
    return refuse(GLMRT_ERR_OUT_OF_MEMORY, "the host refused memory for the n-gram index");
  const int64_t start = continuation(history, n);
  if (start < 0) return GLMRT_OK;
  for (int32_t j = 0; j < request->max_tokens; ++j) {
    const int64_t source = start + j;  // in history followed by the drafts so far
    proposal->tokens[j] = source < n ? history[source] : proposal->tokens[source - n];
    proposal->q_size[j] = 0;  // deterministic: q is one-hot
  }
  proposal->n_tokens = request->max_tokens;
  return GLMRT_OK;
}

}  // namespace glmrt::draft_ngram
