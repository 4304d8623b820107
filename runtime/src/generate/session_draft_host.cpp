#include "session_draft_host.h"

#include <glmrt/base/error.h>

#include <algorithm>
#include <cstring>

namespace glmrt {

SessionDraftHost::SessionDraftHost(Session& session, bool mtp_allowed)
    : session_(session), mtp_allowed_(mtp_allowed) {}

void SessionDraftHost::begin(int32_t pending_token, int32_t max_tokens) {
  pending_token_ = pending_token;
  max_tokens_ = max_tokens;
  message_.clear();
  exception_ = nullptr;
}

int32_t SessionDraftHost::vocab_size() const noexcept {
  return session_.engine().model().config().vocab_size;
}

int32_t SessionDraftHost::hidden_size() const noexcept {
  return session_.engine().model().config().hidden_size;
}

bool SessionDraftHost::has_mtp() const noexcept {
  return session_.engine().model().has_mtp();
}

glmrt_status SessionDraftHost::refuse(glmrt_status status, std::string message) noexcept {
  try {
    message_ = std::move(message);
  } catch (...) {
    message_.clear();  // out of memory for the text: the status still says it failed
  }
  return status;
}

glmrt_status SessionDraftHost::last_hidden(float* out) noexcept {
  if (!out) return refuse(GLMRT_ERR_INVALID_ARGUMENT, "last_hidden: `out` is NULL");
  const std::span<const float> h = session_.last_hidden();
  if (h.empty())
    return refuse(GLMRT_ERR_INVALID_ARGUMENT,
                  "last_hidden: the main model has not run a position of this sequence yet");
  std::copy(h.begin(), h.end(), out);
  return GLMRT_OK;
}

glmrt_status SessionDraftHost::run_mtp(int32_t token, int64_t position, const float* h,
                                       float* h_out, float* logits) noexcept {
  if (!mtp_allowed_)
    return refuse(GLMRT_ERR_UNSUPPORTED,
                  "run_mtp: the drafter did not declare GLMRT_DRAFT_NEEDS_MTP in requirements(), "
                  "so this sequence keeps no MTP rows");
  if (!h || !h_out || !logits) return refuse(GLMRT_ERR_INVALID_ARGUMENT, "run_mtp: a NULL buffer");
  try {
    Model& model = session_.engine().model();
    const int64_t D = model.config().hidden_size, V = model.config().vocab_size;
    const int64_t first = static_cast<int64_t>(session_.tokens().size()) - 1;
    if (position < first || position >= first + max_tokens_)
      return refuse(GLMRT_ERR_INVALID_ARGUMENT,
                    fmt::format("run_mtp: row {} is outside this proposal's rows {}..{}", position,
                                first, first + max_tokens_ - 1));
    if (token < 0 || token >= V)
      return refuse(
          GLMRT_ERR_INVALID_ARGUMENT,
          fmt::format("run_mtp: token {} is outside the vocabulary (0..{})", token, V - 1));
    // The first draft's row pairs the last position's true state with the
    // history's last token: that row stays after verification.
    const std::span<const float> last = session_.last_hidden();
    const bool verified_pair = position == first && token == pending_token_ &&
                               static_cast<int64_t>(last.size()) == D &&
                               std::memcmp(h, last.data(), D * sizeof(float)) == 0;
    const std::vector<float> out =
        session_.run_mtp(token, position, {h, static_cast<size_t>(D)}, verified_pair);
    std::copy(out.begin(), out.end(), h_out);
    const std::vector<float> row = model.mtp_logits(out, 1);
    std::copy(row.begin(), row.end(), logits);
    return GLMRT_OK;
  } catch (const std::exception& e) {
    if (!exception_) exception_ = std::current_exception();
    return refuse(GLMRT_ERR_INTERNAL, e.what());
  } catch (...) {
    if (!exception_) exception_ = std::current_exception();
    return refuse(GLMRT_ERR_INTERNAL, "run_mtp failed");
  }
}

}  // namespace glmrt
