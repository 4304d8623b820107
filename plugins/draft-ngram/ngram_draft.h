// Prompt lookup (as vLLM's and llama.cpp's): the most recent earlier
// occurrence of the history's last n tokens proposes what followed it,
// trying n = max_n first and falling back to shorter n down to min_n. With
// min_n = 0 a history with no repeated n-gram at all proposes its last token
// again. A continuation that runs into the end of the history carries on
// copying its own drafts, so a repeating pattern drafts whole periods. Drafts
// are deterministic: q is one-hot.
#pragma once

#include "ngram_index.h"

#include <glmrt/plugin/draft.h>

#include <string>

namespace glmrt::draft_ngram {

struct NgramSettings {
  int min_n = 1;
  int max_n = 4;
};

/// Reads `min_n` and `max_n`; false with a message naming the key otherwise.
bool parse_settings(const glmrt_setting* settings, size_t n_settings, NgramSettings& out,
                    std::string& error);

class NgramDraft final : public plugin::Draft {
 public:
  static constexpr const char* kName = "draft-ngram";

  NgramDraft(const glmrt_host_services& host, NgramSettings settings);

  uint32_t requirements() const noexcept override { return 0; }
  glmrt_status propose(plugin::DraftHost& host, const glmrt_draft_request* request,
                       glmrt_draft_proposal* proposal) noexcept override;
  /// Lookup needs no feedback: what was accepted reaches the history.
  void accepted(int32_t, int32_t) noexcept override {}
  void rewind(int64_t length) noexcept override { index_.rewind(length); }
  const char* last_error() const noexcept override { return error_; }
  void destroy() noexcept override { delete this; }

 private:
  glmrt_status refuse(glmrt_status status, const char* message) noexcept;
  /// Where the continuation to propose starts in the history, or -1.
  int64_t continuation(const int32_t* history, int64_t n_history) const noexcept;

  NgramSettings settings_;
  NgramIndex index_;
  char error_[256] = {};
};

}  // namespace glmrt::draft_ngram
