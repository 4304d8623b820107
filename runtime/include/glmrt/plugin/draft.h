// Draft plugins: propose tokens for lossless speculative decoding (the draft
// contract of ABI 1.2; hosts refuse draft plugins built for an older minor,
// whose table has a different layout and would be called wrongly).
//
// One decode step as the host runs it. The history ends with a token x that
// has been chosen but not yet run through the main model. The host asks the
// drafter for up to max_tokens continuations of the history, each with the
// distribution q it was drawn from; runs x and the drafts through the main
// model as one batch (each distinct expert loaded once for all of them);
// accepts draft i with probability min(1, p(d_i) / q(d_i)), where p is the
// host's sampling distribution (temperature, top-k, top-p, min-p, penalties)
// at that position, and on the first rejection resamples from the normalised
// max(0, p - q). So what comes out is distributed exactly as without a
// drafter, and greedy decoding emits exactly the same tokens: a drafter can
// change speed, never output. The host then drops the rejected positions from
// every cache and tells the drafter how many drafts it accepted.
//
// The MTP layer (DeepSeek-V3 style, index num_hidden_layers): its row t
// consumes the embedding of token t+1 and a hidden state h for position t,
//   h' = decoder_layer(eh_proj([enorm(embed(token)); hnorm(h)]))
//   logits = head(shared_head.norm(h'))
// and keeps its own latent KV row t. For the first draft, h is the main
// model's hidden state at position t after its final norm (model.norm,
// applied once: what last_hidden() returns); for a chained draft, h is the
// previous MTP row's output h' before shared_head.norm (as DeepSeek-V3 and
// vLLM chain it). The host owns the MTP rows: rows for every verified pair of
// the sequence (the prompt's included, absorbed during prefill) are kept
// there, rows a drafter adds beyond them are dropped after verification.
#pragma once

#include <glmrt/plugin/abi.h>
#include <glmrt/plugin/host_services.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Bits of Draft::requirements().
/// The drafter runs the MTP layer: the host keeps the MTP layer's rows in step
/// with the sequence and refuses the drafter for a checkpoint without one.
#define GLMRT_DRAFT_NEEDS_MTP 1u

/// One request for drafts. The host owns every pointer.
typedef struct glmrt_draft_request {
  uint32_t struct_size;
  int32_t max_tokens;      // propose at most this many (>= 1)
  const int32_t* history;  // every token of the sequence, oldest first
  int64_t n_history;       // >= 1; history[n_history - 1] is x (not yet run)
  // How the host samples the main model, so a stochastic drafter can shape q
  // alike. q need not equal p for the output to stay exact; the closer it is,
  // the more drafts are accepted.
  float temperature;  // 0 = greedy: only the main model's argmax is accepted
  int32_t top_k;      // 0 = off
  float top_p;        // 1 = off
  float min_p;        // 0 = off
  /// max_tokens uniform draws in [0, 1) from the host's seeded generator. A
  /// stochastic drafter draws draft i from its q with uniforms[i] (inverse
  /// CDF over q's entries in the order it writes them), so a seed repeats runs.
  const double* uniforms;
  /// The penalties the host applies to the main model's logits before the
  /// above (glmrt's Sampler): logits of every distinct token of the history
  /// are divided by repetition_penalty when positive, multiplied when negative;
  /// then presence_penalty is subtracted from every distinct token of the
  /// answer so far, the history's last n_answer tokens (x included). A drafter
  /// that applies them to its own logits, counting its earlier drafts as
  /// history and answer, drafts what a penalised greedy host picks. Present
  /// when struct_size covers them (GLMRT_DRAFT_REQUEST_HAS_PENALTIES).
  float repetition_penalty;  // 1 = off (0 too: a zeroed field)
  float presence_penalty;    // 0 = off
  int64_t n_answer;          // 0..n_history
  /// After the presence penalty, the host subtracts frequency_penalty from a
  /// token's logit once per time it occurs in the answer (OpenAI's). Appended
  /// within 1.2, so present only when struct_size covers it
  /// (GLMRT_DRAFT_REQUEST_HAS_FREQUENCY_PENALTY): older hosts leave it out.
  float frequency_penalty;  // 0 = off
} glmrt_draft_request;

/// Whether `request` carries the penalty fields.
#define GLMRT_DRAFT_REQUEST_HAS_PENALTIES(request) \
  ((request)->struct_size >= offsetof(glmrt_draft_request, n_answer) + sizeof(int64_t))
/// Whether `request` carries frequency_penalty as well.
#define GLMRT_DRAFT_REQUEST_HAS_FREQUENCY_PENALTY(request) \
  ((request)->struct_size >= offsetof(glmrt_draft_request, frequency_penalty) + sizeof(float))

/// Where a drafter writes its proposal. The host owns the arrays.
typedef struct glmrt_draft_proposal {
  uint32_t struct_size;
  int32_t max_tokens;  // rows of `tokens` and `q_size` (the request's max_tokens)
  int32_t q_capacity;  // entries per row of q_tokens / q_probs: the vocabulary size
  int32_t n_tokens;    // out: drafts written, 0..max_tokens (0 is fine)
  int32_t* tokens;     // out [max_tokens]: the drafts, each continuing the previous
  /// out [max_tokens]: how many (id, probability) entries describe draft i's q;
  /// 0 = q is one-hot on tokens[i] (a deterministic drafter).
  int32_t* q_size;
  /// out [max_tokens * q_capacity]: draft i's q at offset i * q_capacity, as
  /// distinct token ids with their probabilities (summing to 1, tokens[i]
  /// among them with q > 0); every id not listed has q = 0. A dense q lists
  /// the whole vocabulary, a top-k q its k entries.
  int32_t* q_tokens;
  float* q_probs;
} glmrt_draft_proposal;

#ifdef __cplusplus
}  // extern "C"

namespace glmrt::plugin {

/// Model services the host lends a drafter during propose(), bound to the
/// sequence being decoded.
class DraftHost {
 public:
  virtual int32_t vocab_size() const noexcept = 0;
  virtual int32_t hidden_size() const noexcept = 0;
  /// Whether the checkpoint carries an MTP layer.
  virtual bool has_mtp() const noexcept = 0;
  /// The hidden state the MTP layer consumes for the first draft: the main
  /// model's hidden state after its final norm (normalised once) at position
  /// n_history - 2, the last one the main model has run (hidden_size floats).
  /// Fails when n_history < 2.
  virtual glmrt_status last_hidden(float* out) noexcept = 0;
  /// Runs the MTP layer for row `position` (see the top of this file): drops
  /// the MTP rows from `position` on, appends row `position` for `token` and
  /// `h` (hidden_size floats), writes h' (before shared_head.norm) to `h_out`
  /// and the logits (vocab_size floats) to `logits`. The first draft is
  /// run_mtp(history[n-1], n-2, last_hidden()); draft i > 0 chains as
  /// run_mtp(draft[i-1], n-2+i, h_out of draft i-1). Rows stay contiguous:
  /// position is in [n-2, n-2+max_tokens) and at most one past the last row.
  /// Only for drafters whose requirements() include GLMRT_DRAFT_NEEDS_MTP.
  virtual glmrt_status run_mtp(int32_t token, int64_t position, const float* h, float* h_out,
                               float* logits) noexcept = 0;
  /// Text of the last failed call.
  virtual const char* last_error() const noexcept = 0;

 protected:
  ~DraftHost() = default;
};

/// Created by a GLMRT_PLUGIN_DRAFT plugin's create(), one per sequence. The
/// host calls it from one thread at a time.
class Draft {
 public:
  /// GLMRT_DRAFT_* bits: what the host must provide. Asked once, at load.
  virtual uint32_t requirements() const noexcept = 0;
  /// Proposes up to request.max_tokens drafts continuing request.history into
  /// `proposal` (see glmrt_draft_proposal). The history only grows between
  /// calls unless rewind() says otherwise.
  virtual glmrt_status propose(DraftHost& host, const glmrt_draft_request* request,
                               glmrt_draft_proposal* proposal) noexcept = 0;
  /// After verification: the first n_accepted of the last proposal's
  /// n_proposed drafts were accepted.
  virtual void accepted(int32_t n_accepted, int32_t n_proposed) noexcept = 0;
  /// The history keeps only its first `length` tokens; what follows in the
  /// next propose() may differ from what came before (a new prompt diverged
  /// there, or the sequence was reset to 0).
  virtual void rewind(int64_t length) noexcept = 0;

  /// Text of the most recent error of this object.
  virtual const char* last_error() const noexcept = 0;
  /// Releases the object (the plugin frees what it allocated).
  virtual void destroy() noexcept = 0;

 protected:
  ~Draft() = default;
};

}  // namespace glmrt::plugin
#endif
