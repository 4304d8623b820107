// draft plugins: creation, requirements, and proposals that keep the draft
// contract (glmrt/plugin/draft.h), against a stub model whose MTP layer is a
// fixed function and which checks how the drafter calls it.
#include "plugin_checks.h"

#include <glmrt/base/error.h>
#include <glmrt/conformance/plugin_conformance.h>
#include <glmrt/draft/draft_proposal.h>
#include <glmrt/host/plugin_host.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace glmrt::conformance {
namespace {

constexpr int32_t kVocab = 64;
constexpr int32_t kHidden = 8;

/// A model with (or without) an MTP layer that is a fixed smooth function of
/// (token, h), so drafts are deterministic; records contract violations of
/// the drafter's calls.
class StubModel final : public plugin::DraftHost {
 public:
  explicit StubModel(bool with_mtp) : with_mtp_(with_mtp) {}

  void begin(std::span<const int32_t> history, int32_t max_tokens) {
    n_history_ = static_cast<int64_t>(history.size());
    last_token_ = history.empty() ? -1 : history.back();
    max_tokens_ = max_tokens;
    next_row_ = n_history_ - 2;
    for (int32_t d = 0; d < kHidden; ++d) last_hidden_[d] = std::sin(0.37f * d + n_history_);
  }
  const std::string& violation() const { return violation_; }

  int32_t vocab_size() const noexcept override { return kVocab; }
  int32_t hidden_size() const noexcept override { return kHidden; }
  bool has_mtp() const noexcept override { return with_mtp_; }
  glmrt_status last_hidden(float* out) noexcept override {
    if (n_history_ < 2) return refuse("last_hidden: no position has run yet");
    std::copy(last_hidden_, last_hidden_ + kHidden, out);
    return GLMRT_OK;
  }
  glmrt_status run_mtp(int32_t token, int64_t position, const float* h, float* h_out,
                       float* logits) noexcept override {
    if (!with_mtp_) return refuse("run_mtp: this model has no MTP layer");
    const int64_t first = n_history_ - 2;
    if (position < first || position >= first + max_tokens_ || position > next_row_)
      note(fmt::format("run_mtp row {} outside rows {}..{} or past the next row {}", position,
                       first, first + max_tokens_ - 1, next_row_));
    if (position == first && token != last_token_)
      note(fmt::format("the first MTP row got token {}, not the history's last {}", token,
                       last_token_));
    if (position == first && !std::equal(h, h + kHidden, last_hidden_))
      note("the first MTP row's h is not last_hidden()");
    if (token < 0 || token >= kVocab) note(fmt::format("run_mtp token {} out of range", token));
    next_row_ = position + 1;
    for (int32_t d = 0; d < kHidden; ++d) h_out[d] = std::tanh(h[d] + 0.1f * token - 0.05f * d);
    for (int32_t v = 0; v < kVocab; ++v) {
      float dot = 0.f;
      for (int32_t d = 0; d < kHidden; ++d) dot += h_out[d] * std::cos(0.5f * v * (d + 1));
      logits[v] = 3.f * dot;
    }
    return GLMRT_OK;
  }
  const char* last_error() const noexcept override { return error_.c_str(); }

 private:
  glmrt_status refuse(const char* message) noexcept {
    error_ = message;
    return GLMRT_ERR_INVALID_ARGUMENT;
  }
  void note(std::string what) {
    if (violation_.empty()) violation_ = std::move(what);
  }

  bool with_mtp_;
  int64_t n_history_ = 0, next_row_ = 0;
  int32_t last_token_ = -1, max_tokens_ = 0;
  float last_hidden_[kHidden] = {};
  std::string violation_, error_;
};

/// One propose() through the host's own proposal check; returns the drafts
/// (empty on failure, reported).
std::vector<int32_t> check_proposal(CheckReport& report, plugin::Draft& draft, StubModel& model,
                                    const std::vector<int32_t>& history, int32_t max_tokens,
                                    float temperature, const std::string& name) {
  DraftProposal proposal(kVocab, std::max(max_tokens, 1));
  SamplingParams sampling;
  sampling.temperature = temperature;
  std::mt19937_64 rng(7);
  glmrt_draft_request request = proposal.request(history, std::max(max_tokens, 1), sampling, rng);
  model.begin(history, request.max_tokens);
  if (draft.propose(model, &request, proposal.proposal()) != GLMRT_OK) {
    const std::string message = draft.last_error() ? draft.last_error() : "";
    report.expect(!message.empty(), name, "propose failed without a message");
    return {};
  }
  try {
    proposal.check("under test");
  } catch (const Error& e) {
    report.fail(name, e.what());
    return {};
  }
  if (!model.violation().empty()) {
    report.fail(name, "run_mtp called against the contract: " + model.violation());
    return {};
  }
  report.pass(name);
  const auto tokens = proposal.tokens();
  return {tokens.begin(), tokens.end()};
}

}  // namespace

CheckReport run_draft_conformance(const std::filesystem::path& plugin_file) {
  CheckReport report;
  const PluginHost host(std::vector<std::filesystem::path>{});
  MemoryBudget budget;
  HostServices services(budget, 2);
  check_rejects_unknown_setting(
      report, plugin_file, [&](const PluginChoice& bogus) { host.create_draft(bogus, services); });
  PluginHandle<plugin::Draft> draft;
  try {
    draft = host.create_draft(PluginChoice{plugin_file.string(), {}, {}}, services);
    report.pass("create with default settings");
  } catch (const Error& e) {
    report.fail("create with default settings", e.what());
    return report;
  }
  const uint32_t requirements = draft->requirements();
  report.expect((requirements & ~GLMRT_DRAFT_NEEDS_MTP) == 0, "requirements",
                fmt::format("requirements() = {:#x}: only GLMRT_DRAFT_* bits", requirements));
  StubModel model(/*with_mtp=*/(requirements & GLMRT_DRAFT_NEEDS_MTP) != 0);
  // A repetitive history: prompt-lookup drafters find continuations in it.
  std::vector<int32_t> history;
  for (int repeat = 0; repeat < 6; ++repeat)
    for (int32_t token : {11, 12, 13, 14, 15}) history.push_back(token);
  const auto first =
      check_proposal(report, *draft, model, history, 4, 0.f, "propose up to 4 tokens, greedy");
  const auto again = check_proposal(report, *draft, model, history, 4, 0.f, "propose again");
  if (first == again)
    report.pass("same history, same drafts");
  else
    report.fail("same history, same drafts",
                "two proposals for one history and the same uniforms differ");
  check_proposal(report, *draft, model, history, 3, 1.f, "propose with sampling (q checked)");
  check_proposal(report, *draft, model, history, 1, 0.7f, "propose 1 token at temperature 0.7");
  draft->accepted(1, 4);
  history.push_back(11);
  check_proposal(report, *draft, model, history, 4, 0.f, "propose after accepted()");
  draft->rewind(10);
  history.resize(10);
  history.push_back(40);
  check_proposal(report, *draft, model, history, 3, 0.f, "propose after rewind() and a change");
  draft->rewind(0);
  check_proposal(report, *draft, model, {7}, 2, 0.f, "propose with a one-token history");
  return report;
}

}  // namespace glmrt::conformance
