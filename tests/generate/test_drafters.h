// In-process drafters for the speculative-decoding tests, implementing the
// SDK's plugin::Draft directly: one that knows the sequence to come (and can
// be told to get some of it wrong), and one whose q is a random dense law.
#pragma once

#include <glmrt/sampling/sampler.h>
#include <glmrt/plugin/draft.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace glmrt::test_support {

/// Temperature 0: argmax decoding.
inline SamplingParams greedy_sampling() {
  SamplingParams p;
  p.temperature = 0;
  return p;
}

/// Proposes how `script` goes on wherever the history follows it; every
/// `wrong_every`-th draft (0 = none) is replaced by another token. One-hot q.
class ScriptedDrafter final : public plugin::Draft {
 public:
  ScriptedDrafter(std::vector<int32_t> script, int wrong_every, int32_t vocab)
      : script_(std::move(script)), wrong_every_(wrong_every), vocab_(vocab) {}

  uint32_t requirements() const noexcept override { return 0; }
  glmrt_status propose(plugin::DraftHost& host, const glmrt_draft_request* request,
                       glmrt_draft_proposal* proposal) noexcept override;
  void accepted(int32_t n_accepted, int32_t n_proposed) noexcept override {
    verdicts.emplace_back(n_accepted, n_proposed);
  }
  void rewind(int64_t length) noexcept override { rewinds.push_back(length); }
  const char* last_error() const noexcept override { return ""; }
  void destroy() noexcept override {}

  std::vector<std::pair<int32_t, int32_t>> verdicts;  // accepted() calls
  std::vector<int64_t> rewinds;

 private:
  std::vector<int32_t> script_;
  int wrong_every_;
  int32_t vocab_;
  int64_t drafted_ = 0;
};

/// Draws every draft from a dense q over the whole vocabulary that differs
/// from call to call (a stochastic drafter unrelated to the model).
class RandomQDrafter final : public plugin::Draft {
 public:
  explicit RandomQDrafter(int32_t vocab) : vocab_(vocab) {}

  uint32_t requirements() const noexcept override { return 0; }
  glmrt_status propose(plugin::DraftHost& host, const glmrt_draft_request* request,
                       glmrt_draft_proposal* proposal) noexcept override;
  void accepted(int32_t, int32_t) noexcept override {}
  void rewind(int64_t) noexcept override {}
  const char* last_error() const noexcept override { return ""; }
  void destroy() noexcept override {}

 private:
  int32_t vocab_;
  uint64_t calls_ = 0;
};

}  // namespace glmrt::test_support
