#include "engine_fixture.h"

namespace glmrt::test_support {

Profile reference_profile() {
  Profile profile =
      load_profile(std::filesystem::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
  profile.plugin_paths.insert(profile.plugin_paths.begin(),
                              std::filesystem::path(GLMRT_BUILD_DIR) / "plugins");
  return profile;
}

std::unique_ptr<Engine> open_tiny_engine(const Profile& profile) {
  return Engine::open(profile, kTinyModel);
}

}  // namespace glmrt::test_support
