// Session::run_together: the steps of several sessions as one forward, so a
// second sequence costs its own rows but no second pass over the weights
// and experts (each MoE layer reads the union of the rows' experts once).
#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/generate/session.h>

#include <chrono>
#include <deque>

namespace glmrt {

std::vector<std::vector<float>> Session::run_together(std::span<const SessionStep> steps) {
  if (steps.empty()) return {};
  const auto t0 = std::chrono::steady_clock::now();
  Engine& engine = steps.front().session.engine_;
  Model& model = engine.model();
  const int64_t D = model.config().hidden_size;
  std::vector<Model::SequenceStep> sequences;
  bool any_prefill = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    Session& s = steps[i].session;
    if (&s.engine_ != &engine) fail("run_together: session {} runs on another engine", i);
    if (s.speculator_ || s.mtp_)
      fail(
          "run_together: session {} drafts ({}): steps taken together run without a drafter "
          "(make the session with std::nullopt, or plugins.draft: none)",
          i, s.drafting_.name);
    if (steps[i].tokens.empty()) fail("run_together: session {} has no tokens for the step", i);
    sequences.push_back({s.cache_, steps[i].tokens});
    any_prefill |= steps[i].prefill;
  }
  // All or nothing: the caches go back if the heads fail after the forward.
  std::deque<KvRollback> rollbacks;
  for (const SessionStep& step : steps) rollbacks.emplace_back(step.session.cache_);
  std::vector<float> hidden;
  {
    // Cache-aware routing (routing.cache_bias) applies when every row is a
    // decode step's; a prompt is routed exactly.
    const Model::DecodeSteps decode_steps(model, !any_prefill);
    hidden = model.forward_batch(sequences);
  }
  // Each session's last row, final-normed (what its logits and its next
  // step's MTP pair would use), then lm_head over the rows that need logits.
  std::vector<float> last_rows(steps.size() * D);
  int64_t end = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    end += static_cast<int64_t>(steps[i].tokens.size());
    std::copy_n(hidden.begin() + (end - 1) * D, D, last_rows.begin() + static_cast<int64_t>(i) * D);
  }
  const std::vector<float> normed = model.final_norm(last_rows, static_cast<int64_t>(steps.size()));
  std::vector<float> wanted;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].logits)
      wanted.insert(wanted.end(), normed.begin() + static_cast<int64_t>(i) * D,
                    normed.begin() + static_cast<int64_t>(i + 1) * D);
  const int64_t rows_wanted = static_cast<int64_t>(wanted.size()) / D;
  const std::vector<float> head =
      rows_wanted > 0 ? model.head(wanted, rows_wanted) : std::vector<float>{};
  for (KvRollback& rollback : rollbacks) rollback.commit();

  const int64_t V = model.config().vocab_size;
  const double seconds = seconds_since(t0);
  std::vector<std::vector<float>> logits(steps.size());
  int64_t row = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    Session& s = steps[i].session;
    const int64_t first = static_cast<int64_t>(s.tokens_.size());
    std::vector<float> last(normed.begin() + static_cast<int64_t>(i) * D,
                            normed.begin() + static_cast<int64_t>(i + 1) * D);
    s.record_step(steps[i].tokens, first, std::move(last), {}, false, steps[i].prefill, seconds);
    if (steps[i].logits) {
      logits[i].assign(head.begin() + row * V, head.begin() + (row + 1) * V);
      ++row;
    }
  }
  return logits;
}

}  // namespace glmrt
