// Drafts from the checkpoint's MTP layer (DeepSeek-V3 style), chained: the
// first draft runs the MTP row of the last main position with the history's
// last token and the main model's final-normed state; each further draft
// feeds the previous MTP output (before shared_head.norm) and the previous
// draft. Drafting stops early when the MTP head's top probability falls under
// `p_min` (as llama.cpp's --draft-p-min). Greedy requests draft the argmax
// (q one-hot); sampled requests draw from the head's softmax shaped like the
// host's sampling (draft_distribution.h).
#pragma once

#include <glmrt/plugin/draft.h>
#include <host_buffer.h>

#include <string>

namespace glmrt::draft_mtp {

using plugin_support::HostBuffer;

struct MtpSettings {
  float p_min = 0.0f;  // 0: always draft as many as asked
};

/// Reads `p_min`; false with a message naming the key otherwise.
bool parse_settings(const glmrt_setting* settings, size_t n_settings, MtpSettings& out,
                    std::string& error);

class MtpDraft final : public plugin::Draft {
 public:
  static constexpr const char* kName = "draft-mtp";

  MtpDraft(const glmrt_host_services& host, MtpSettings settings);

  uint32_t requirements() const noexcept override { return GLMRT_DRAFT_NEEDS_MTP; }
  glmrt_status propose(plugin::DraftHost& host, const glmrt_draft_request* request,
                       glmrt_draft_proposal* proposal) noexcept override;
  /// The host keeps the MTP rows in step with what was accepted.
  void accepted(int32_t, int32_t) noexcept override {}
  /// The MTP rows are the host's; nothing here depends on the history.
  void rewind(int64_t) noexcept override {}
  const char* last_error() const noexcept override { return error_; }
  void destroy() noexcept override { delete this; }

 private:
  glmrt_status refuse(glmrt_status status, const char* message) noexcept;

  MtpSettings settings_;
  HostBuffer scratch_;
  char error_[512] = {};
};

}  // namespace glmrt::draft_mtp
