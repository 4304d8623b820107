#include <glmrt/draft/draft_setup.h>

namespace glmrt {

DraftSetup borrowed_drafter(plugin::Draft& drafter, DraftPolicy policy, std::string name) {
  DraftSetup setup;
  setup.drafter = &drafter;
  setup.requirements = drafter.requirements();
  setup.policy = policy;
  setup.name = std::move(name);
  return setup;
}

}  // namespace glmrt
