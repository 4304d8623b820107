// Which drafter a session decodes with, and how many drafts it may ask for.
#pragma once

#include <glmrt/host/plugin_host.h>
#include <glmrt/plugin/draft.h>

#include <cstdint>
#include <string>

namespace glmrt {

/// The profile's draft-length keys (docs/profiles.md).
struct DraftPolicy {
  int max_tokens = 4;    // plugins.max_draft_tokens: the most drafts one step verifies
  int min_tokens = 1;    // plugins.draft_min_tokens: fewer proposed drafts are not verified
  bool adaptive = true;  // plugins.draft_adaptive: the cost model picks each step's length
};

struct DraftSetup {
  PluginHandle<plugin::Draft> plugin;  // owns the drafter when a plugin made it
  plugin::Draft* drafter = nullptr;    // the drafter (the plugin's object, or the caller's)
  uint32_t requirements = 0;           // drafter->requirements(), GLMRT_DRAFT_* bits
  DraftPolicy policy;
  std::string name;  // for reports: the plugin's name
};

/// A setup for a drafter the caller owns and keeps alive (tests, benchmarks).
DraftSetup borrowed_drafter(plugin::Draft& drafter, DraftPolicy policy, std::string name);

}  // namespace glmrt
