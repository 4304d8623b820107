#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/generate/session.h>
#include <glmrt/generate/speculator.h>

#include <algorithm>
#include <chrono>

namespace glmrt {

SessionStats session_stats_since(const SessionStats& now, const SessionStats& before) {
  SessionStats d;
  d.prefilled_tokens = now.prefilled_tokens - before.prefilled_tokens;
  d.reused_tokens = now.reused_tokens - before.reused_tokens;
  d.decoded_tokens = now.decoded_tokens - before.decoded_tokens;
  d.prefill_seconds = now.prefill_seconds - before.prefill_seconds;
  d.decode_seconds = now.decode_seconds - before.decode_seconds;
  return d;
}

Session::Session(Engine& engine) : Session(engine, engine.draft_setup()) {}

Session::Session(Engine& engine, std::optional<DraftSetup> drafting)
    : engine_(engine), prefill_chunk_(engine.prefill_chunk()), cache_(engine.new_cache()) {
  if (!drafting || !drafting->drafter) return;
  drafting_ = std::move(*drafting);
  if (drafting_.requirements & GLMRT_DRAFT_NEEDS_MTP) {
    if (!engine.model().has_mtp())
      fail(
          "draft plugin `{}` runs the checkpoint's MTP layer, but {} has none "
          "(config.json num_nextn_predict_layers = 0): choose another drafter or plugins.draft: "
          "none",
          drafting_.name, engine.model_dir());
    mtp_.emplace(engine.model());
  }
  speculator_ = std::make_unique<Speculator>(*this, drafting_);
}

Session::~Session() = default;

std::vector<float> Session::run(std::span<const int32_t> tokens, bool prefill, Logits which,
                                const Model::ChunkSink& on_rows) {
  const auto t0 = std::chrono::steady_clock::now();
  Model& model = engine_.model();
  const int64_t D = model.config().hidden_size;
  const int64_t first = static_cast<int64_t>(tokens_.size());
  // All or nothing: a step that throws (in any chunk) leaves tokens, caches
  // and MTP rows as they were.
  KvRollback rollback(cache_);
  std::optional<MtpRows> mtp_before = mtp_;
  std::vector<float> last = last_hidden_, step_hidden, logits;
  try {
    // Cache-aware routing (routing.cache_bias) applies to decode and
    // verification steps only: a prompt is routed exactly.
    const Model::DecodeSteps decode_steps(model, !prefill);
    model.forward_chunked(cache_, tokens, prefill ? prefill_chunk_ : 0,
                          [&](int64_t chunk_first, std::span<const float> hidden) {
                            if (on_rows) on_rows(first + chunk_first, hidden);
                            const int64_t n = static_cast<int64_t>(hidden.size()) / D;
                            take_rows(first + chunk_first, tokens.subspan(chunk_first, n), hidden,
                                      prefill, which == Logits::every_row, last, step_hidden);
                          });
    if (mtp_ && !prefill) mtp_->flush_if_many(cache_);
    logits = which == Logits::every_row
                 ? model.head(step_hidden, static_cast<int64_t>(tokens.size()))
                 : model.head(last, 1);
  } catch (...) {
    mtp_ = std::move(mtp_before);
    throw;
  }
  rollback.commit();
  record_step(tokens, first, std::move(last), std::move(step_hidden), which == Logits::every_row,
              prefill, seconds_since(t0));
  return logits;
}

void Session::take_rows(int64_t first, std::span<const int32_t> tokens,
                        std::span<const float> hidden, bool prefill, bool every_row,
                        std::vector<float>& last, std::vector<float>& step_hidden) {
  Model& model = engine_.model();
  const int64_t D = model.config().hidden_size;
  const int64_t n = static_cast<int64_t>(tokens.size());
  // Every row's final-normed state is needed for all logits and for MTP
  // pairs; otherwise only the last row's.
  const bool all_rows = every_row || mtp_;
  const std::vector<float> normed =
      all_rows ? model.final_norm(hidden, n) : model.final_norm(hidden.last(D), 1);
  if (mtp_) {
    // Pairs for rows p-1 of these positions p: the state before each token
    // with that token.
    const int64_t first_row = first - 1;
    const int64_t skip = first_row < mtp_->next_row() ? 1 : 0;
    if (!skip && last.empty())
      fail("session: the hidden state at position {} is unknown", first_row);
    std::vector<float> h;
    if (!skip) h = last;
    h.insert(h.end(), normed.begin(), normed.end() - D);
    mtp_->add_pairs(first_row + skip, h, tokens.subspan(static_cast<size_t>(skip)));
    if (prefill) mtp_->flush(cache_);  // the prompt's pairs, chunk by chunk
  }
  last.assign(normed.end() - D, normed.end());
  if (every_row) step_hidden = normed;
}

void Session::record_step(std::span<const int32_t> tokens, int64_t first, std::vector<float> last,
                          std::vector<float> step_hidden, bool every_row, bool prefill,
                          double seconds) {
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  hidden_before_step_ = std::move(last_hidden_);
  last_hidden_ = std::move(last);
  // rollback_to() needs each row's state: kept for extend() and single-token
  // steps; a prefill of many tokens is never rolled back into.
  if (every_row || tokens.size() == 1) {
    step_first_ = first;
    step_hidden_ = every_row ? std::move(step_hidden) : last_hidden_;
  } else {
    step_first_ = static_cast<int64_t>(tokens_.size());
    step_hidden_.clear();
  }
  if (prefill) {
    stats_.prefilled_tokens += static_cast<int64_t>(tokens.size());
    stats_.prefill_seconds += seconds;
  } else {
    stats_.decoded_tokens += static_cast<int64_t>(tokens.size());
    stats_.decode_seconds += seconds;
  }
}

void Session::truncate(int64_t length) {
  if (mtp_) mtp_->truncate(cache_, length);
  cache_.truncate(length);
  tokens_.resize(static_cast<size_t>(length));
  step_first_ = length;  // no rollback_to() past a truncation
  step_hidden_.clear();
  if (speculator_) speculator_->history_truncated(length);
}

std::vector<float> Session::set_context(std::span<const int32_t> tokens) {
  return set_context(tokens, std::numeric_limits<int64_t>::max(), {}).logits;
}

int64_t Session::reuse_prefix(std::span<const int32_t> tokens, int64_t max_reuse) {
  if (tokens.empty()) fail("cannot run an empty context: the prompt has no tokens");
  size_t common = 0;
  while (common < tokens_.size() && common < tokens.size() && tokens_[common] == tokens[common])
    ++common;
  // The last token must run again to produce its logits.
  if (common == tokens.size()) --common;
  common = static_cast<size_t>(std::clamp<int64_t>(max_reuse, 0, static_cast<int64_t>(common)));
  const bool keeps_last_state = common == tokens_.size() && !last_hidden_.empty();
  if (common < tokens_.size() || !keeps_last_state) {
    truncate(static_cast<int64_t>(common));
    if (mtp_ && common > 0 && !keeps_last_state) {
      // The MTP pair of row common - 1 needs the state at common - 1, which
      // was not kept: run that token again (its own pair row stays).
      --common;
      cache_.truncate(static_cast<int64_t>(common));
      tokens_.resize(common);
    }
    last_hidden_.clear();
  }
  stats_.reused_tokens += static_cast<int64_t>(common);
  return static_cast<int64_t>(common);
}

Session::ContextRun Session::set_context(std::span<const int32_t> tokens, int64_t max_reuse,
                                         const Model::ChunkSink& on_rows) {
  ContextRun result;
  result.reused = reuse_prefix(tokens, max_reuse);
  result.logits =
      run(tokens.subspan(static_cast<size_t>(result.reused)), true, Logits::last_row, on_rows);
  return result;
}

int64_t Session::keep_prefix(std::span<const int32_t> tokens) {
  return reuse_prefix(tokens, std::numeric_limits<int64_t>::max());
}

std::vector<float> Session::append(int32_t token) {
  return run(std::span(&token, 1), false, Logits::last_row);
}

std::vector<float> Session::extend(std::span<const int32_t> tokens) {
  if (tokens.empty()) fail("session: extend() needs at least one token");
  return run(tokens, false, Logits::every_row);
}

void Session::rollback_to(int64_t length) {
  const int64_t now = static_cast<int64_t>(tokens_.size());
  if (length >= now) return;
  if (length < 0) fail("session: rollback_to({}): a length is at least 0", length);
  stats_.decoded_tokens -= now - length;
  if (length < step_first_) {
    // Before the rows the last step kept (an answer that ended on a draft
    // accepted in a step that dropped rejected ones): the state at the new
    // last position is gone, so a step that needs it (an MTP pair) runs that
    // token again, as after a prompt whose state was not kept.
    truncate(length);
    last_hidden_.clear();
    return;
  }
  const int64_t D = engine_.model().config().hidden_size;
  const int64_t row = length - 1 - step_first_;
  if (row < 0)
    last_hidden_ = hidden_before_step_;
  else
    last_hidden_.assign(step_hidden_.begin() + row * D, step_hidden_.begin() + (row + 1) * D);
  truncate(length);
}

void Session::discard_mtp_drafts() {
  if (mtp_) mtp_->truncate(cache_, static_cast<int64_t>(tokens_.size()));
}

void Session::reset() {
  truncate(0);
  last_hidden_.clear();
}

std::vector<float> Session::run_mtp(int32_t token, int64_t position, std::span<const float> h,
                                    bool verified_pair) {
  if (!mtp_)
    fail("session: this session keeps no MTP rows (its drafter does not run the MTP layer)");
  return mtp_->run(cache_, token, position, h, verified_pair);
}

}  // namespace glmrt
