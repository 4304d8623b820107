// Draft plugins: propose tokens for lossless speculative decoding. The host
// verifies every proposal against the full model, so a draft can only change
// speed, never output.
#pragma once

#include <glmrt/plugin/abi.h>
#include <glmrt/plugin/host_services.h>

namespace glmrt::plugin {

/// Model services the host offers a drafter (an MTP drafter runs the model's
/// multi-token-prediction layer through these).
class DraftHost {
 public:
  virtual int32_t vocab_size() const noexcept = 0;
  virtual int32_t hidden_size() const noexcept = 0;
  /// Whether the checkpoint carries an MTP layer.
  virtual bool has_mtp() const noexcept = 0;
  /// The main model's final-normed hidden state at the last accepted position.
  virtual glmrt_status last_hidden(float* out) noexcept = 0;
  /// Runs the MTP layer for `token` at `position` given hidden `h` (hidden_size
  /// floats), writing the new hidden state and the logits (vocab_size floats).
  virtual glmrt_status run_mtp(int32_t token, int64_t position, const float* h, float* h_out,
                               float* logits) noexcept = 0;

 protected:
  ~DraftHost() = default;
};

class Draft {
 public:
  /// Proposes up to `max_tokens` continuations of `history` into `out`;
  /// `*n_out` receives how many (0 is fine).
  virtual glmrt_status propose(DraftHost& host, const int32_t* history, int64_t n_history,
                               int32_t max_tokens, int32_t* out, int32_t* n_out) noexcept = 0;
  /// Told how many of the last proposal were accepted.
  virtual void accepted(int32_t n_accepted, int32_t n_proposed) noexcept = 0;
  /// The sequence was truncated or reset to `length` tokens.
  virtual void rewind(int64_t length) noexcept = 0;

  virtual const char* last_error() const noexcept = 0;
  virtual void destroy() noexcept = 0;

 protected:
  ~Draft() = default;
};

}  // namespace glmrt::plugin
