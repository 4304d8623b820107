// The model services a drafter borrows during propose(), bound to one
// session: its last final-normed hidden state and the MTP layer on the
// session's own MTP rows. Errors never cross the plugin boundary: they become
// a status, and the exception is kept for the host to rethrow.
#pragma once

#include <glmrt/generate/session.h>
#include <glmrt/plugin/draft.h>

#include <exception>
#include <string>

namespace glmrt {

class SessionDraftHost final : public plugin::DraftHost {
 public:
  /// mtp_allowed: the drafter declared GLMRT_DRAFT_NEEDS_MTP (the session
  /// keeps MTP rows).
  SessionDraftHost(Session& session, bool mtp_allowed);

  /// Before each propose(): the token the history ends with, and how many
  /// drafts were asked for (the rows run_mtp may write).
  void begin(int32_t pending_token, int32_t max_tokens);
  /// The first host error of this propose(), if any (rethrown by the caller).
  std::exception_ptr error() const { return exception_; }

  int32_t vocab_size() const noexcept override;
  int32_t hidden_size() const noexcept override;
  bool has_mtp() const noexcept override;
  glmrt_status last_hidden(float* out) noexcept override;
  glmrt_status run_mtp(int32_t token, int64_t position, const float* h, float* h_out,
                       float* logits) noexcept override;
  const char* last_error() const noexcept override { return message_.c_str(); }

 private:
  glmrt_status refuse(glmrt_status status, std::string message) noexcept;

  Session& session_;
  bool mtp_allowed_;
  int32_t pending_token_ = -1;
  int32_t max_tokens_ = 0;
  std::string message_;
  std::exception_ptr exception_;
};

}  // namespace glmrt
