// A profile YAML through the strict loader, and the ranges it promises.
#include <glmrt/base/error.h>
#include <glmrt/profile/profile.h>

#include <cmath>
#include <optional>

#include "fuzz_targets.h"

namespace glmrt::fuzz {
namespace {

void expect_in(const std::optional<double>& value, double low, double high, std::string_view key) {
  if (value) expect(std::isfinite(*value) && *value >= low && *value <= high, key);
}

// The ranges load_profile documents in docs/profiles.md.
void check_ranges(const Profile& p) {
  expect(p.threads >= 0 && p.threads <= 1024, "threads in 0..1024");
  expect(p.max_draft_tokens >= 1 && p.max_draft_tokens <= 16, "max_draft_tokens in 1..16");
  expect(p.expert_cache_per_layer >= 0, "expert_cache not negative");
  expect(p.max_context >= 16, "max_context at least 16");
  expect(!p.kernels.name.empty() && !p.io.name.empty(), "plugins named");
  if (p.draft) expect(!p.draft->name.empty() && p.draft->name != "none", "draft named");
  const GenerationDefaults& g = p.generation;
  expect_in(g.temperature, 0, 100, "generation.temperature");
  expect_in(g.top_p, 0, 1, "generation.top_p");
  expect_in(g.min_p, 0, 1, "generation.min_p");
  expect_in(g.repetition_penalty, 0.01, 100, "generation.repetition_penalty");
  expect_in(g.presence_penalty, -100, 100, "generation.presence_penalty");
  expect_in(g.frequency_penalty, -100, 100, "generation.frequency_penalty");
  const ValidateThresholds& v = p.validate;
  expect(std::isfinite(v.max_kl) && std::isfinite(v.max_dlogit) && std::isfinite(v.min_margin),
         "validate thresholds finite");
  expect(v.min_top1 >= 0 && v.min_top1 <= 1, "validate.min_top1 in 0..1");
}

}  // namespace

int fuzz_profile(Input input, const ScratchDir& scratch) {
  const auto file = ScratchDir::write(scratch.folder("profile"), "profile.yaml", as_text(input));
  try {
    check_ranges(load_profile(file));
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

}  // namespace glmrt::fuzz
