// draft plugins: creation and the shape of proposals, against a stub model.
#include "plugin_checks.h"

#include <glmrt/base/error.h>
#include <glmrt/conformance/plugin_conformance.h>
#include <glmrt/host/plugin_host.h>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace glmrt::conformance {
namespace {

/// A model without an MTP layer: drafters that need one must say so with a
/// status and a message, never crash.
class StubModel final : public plugin::DraftHost {
 public:
  static constexpr int32_t kVocab = 512;
  static constexpr int32_t kHidden = 16;
  int32_t vocab_size() const noexcept override { return kVocab; }
  int32_t hidden_size() const noexcept override { return kHidden; }
  bool has_mtp() const noexcept override { return false; }
  glmrt_status last_hidden(float* out) noexcept override {
    std::fill(out, out + kHidden, 0.0f);
    return GLMRT_OK;
  }
  glmrt_status run_mtp(int32_t, int64_t, const float*, float*, float*) noexcept override {
    return GLMRT_ERR_UNSUPPORTED;
  }
};

/// Runs propose() and checks what a host relies on.
void check_proposal(CheckReport& report, plugin::Draft& draft, StubModel& model,
                    const std::vector<int32_t>& history, int32_t max_tokens,
                    const std::string& name) {
  std::vector<int32_t> out(static_cast<size_t>(max_tokens) + 8, -7);
  int32_t n_out = -1;
  const glmrt_status status = draft.propose(
      model, history.data(), static_cast<int64_t>(history.size()), max_tokens, out.data(), &n_out);
  if (status != GLMRT_OK) {
    const std::string message = draft.last_error() ? draft.last_error() : "";
    report.expect(!message.empty(), name, "propose failed without a message");
    return;
  }
  bool in_vocab = true;
  for (int32_t k = 0; k < std::max(n_out, 0); ++k)
    in_vocab = in_vocab && out[k] >= 0 && out[k] < StubModel::kVocab;
  bool beyond_untouched = true;
  for (size_t k = static_cast<size_t>(std::max(n_out, 0)); k < out.size(); ++k)
    beyond_untouched = beyond_untouched && out[k] == -7;
  report.expect(n_out >= 0 && n_out <= max_tokens && in_vocab && beyond_untouched, name,
                fmt::format("n_out {} (max {}), tokens {} the vocabulary, {}", n_out, max_tokens,
                            in_vocab ? "within" : "outside",
                            beyond_untouched ? "nothing written past n_out" : "wrote past n_out"));
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
  StubModel model;
  // A repetitive history: prompt-lookup drafters find continuations in it.
  std::vector<int32_t> history;
  for (int repeat = 0; repeat < 6; ++repeat)
    for (int32_t token : {11, 12, 13, 14, 15}) history.push_back(token);
  check_proposal(report, *draft, model, history, 4, "propose up to 4 tokens");
  check_proposal(report, *draft, model, history, 0, "propose 0 tokens");
  draft->accepted(1, 4);
  draft->rewind(10);
  history.resize(10);
  check_proposal(report, *draft, model, history, 3, "propose after accepted() and rewind()");
  check_proposal(report, *draft, model, {}, 2, "propose with an empty history");
  return report;
}

}  // namespace glmrt::conformance
