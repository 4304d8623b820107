// Session::run_together: the steps of several sessions as one forward, so a
// second sequence costs its own rows but no second pass over the weights
// and experts (each MoE layer reads the union of the rows' experts once).
#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/generate/session.h>

#include <chrono>
#include <deque>
#include <optional>

namespace glmrt {

std::vector<std::vector<float>> Session::run_together(std::span<const SessionStep> steps) {
  if (steps.empty()) return {};
  const auto t0 = std::chrono::steady_clock::now();
  Engine& engine = steps.front().session.engine_;
  Model& model = engine.model();
  const int64_t D = model.config().hidden_size;
  const int64_t V = model.config().vocab_size;
  std::vector<Model::SequenceStep> sequences;
  bool any_prefill = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    Session& s = steps[i].session;
    if (&s.engine_ != &engine) fail("run_together: session {} runs on another engine", i);
    if (steps[i].tokens.empty()) fail("run_together: session {} has no tokens for the step", i);
    if (steps[i].every_row && !steps[i].logits)
      fail("run_together: session {} asks for every row's logits but no logits", i);
    for (size_t j = 0; j < i; ++j)
      if (&steps[j].session == &s) fail("run_together: sessions {} and {} are the same", j, i);
    sequences.push_back({s.cache_, steps[i].tokens});
    any_prefill |= steps[i].prefill;
  }
  // All or nothing: the caches and MTP rows go back if anything after the
  // forward fails.
  std::deque<KvRollback> rollbacks;
  std::vector<std::optional<MtpRows>> mtp_before;
  for (const SessionStep& step : steps) {
    rollbacks.emplace_back(step.session.cache_);
    mtp_before.push_back(step.session.mtp_);
  }
  const auto restore_mtp = [&] {
    for (size_t i = 0; i < steps.size(); ++i) steps[i].session.mtp_ = std::move(mtp_before[i]);
  };
  std::vector<std::vector<float>> last(steps.size()), every(steps.size());
  std::vector<float> head;
  try {
    std::vector<float> hidden;
    {
      // Cache-aware routing (routing.cache_bias) applies when every row is a
      // decode or verification step's; a prompt is routed exactly.
      const Model::DecodeSteps decode_steps(model, !any_prefill);
      hidden = model.forward_batch(sequences);
    }
    // Each session's rows as a step of its own leaves them (its last state,
    // every row's for a verification, its MTP pairs), then lm_head once over
    // every row that needs logits.
    std::vector<float> wanted;
    int64_t begin = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      Session& s = steps[i].session;
      const int64_t n = static_cast<int64_t>(steps[i].tokens.size());
      const std::span<const float> rows(hidden.data() + begin * D, static_cast<size_t>(n * D));
      begin += n;
      last[i] = s.last_hidden_;
      s.take_rows(static_cast<int64_t>(s.tokens_.size()), steps[i].tokens, rows, steps[i].prefill,
                  steps[i].every_row, last[i], every[i]);
      if (s.mtp_ && !steps[i].prefill) s.mtp_->flush_if_many(s.cache_);
      if (!steps[i].logits) continue;
      const std::vector<float>& from = steps[i].every_row ? every[i] : last[i];
      wanted.insert(wanted.end(), from.begin(), from.end());
    }
    const int64_t rows_wanted = static_cast<int64_t>(wanted.size()) / D;
    if (rows_wanted > 0) head = model.head(wanted, rows_wanted);
  } catch (...) {
    restore_mtp();
    throw;
  }
  for (KvRollback& rollback : rollbacks) rollback.commit();

  const double seconds = seconds_since(t0);
  std::vector<std::vector<float>> logits(steps.size());
  int64_t row = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    Session& s = steps[i].session;
    const int64_t first = static_cast<int64_t>(s.tokens_.size());
    if (steps[i].logits) {
      const int64_t n = steps[i].every_row ? static_cast<int64_t>(steps[i].tokens.size()) : 1;
      logits[i].assign(head.begin() + row * V, head.begin() + (row + n) * V);
      row += n;
    }
    s.record_step(steps[i].tokens, first, std::move(last[i]), std::move(every[i]),
                  steps[i].every_row, steps[i].prefill, seconds);
  }
  return logits;
}

}  // namespace glmrt
