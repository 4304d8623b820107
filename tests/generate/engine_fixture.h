// The tiny GLM checkpoint under configs/reference.yaml, with plugins from this
// build tree, for tests that run the model.
#pragma once

#include <glmrt/engine/engine.h>

#include <filesystem>
#include <memory>

namespace glmrt::test_support {

inline const std::filesystem::path kTinyModel = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";

/// configs/reference.yaml with GLMRT_BUILD_DIR/plugins searched first.
Profile reference_profile();

std::unique_ptr<Engine> open_tiny_engine(const Profile& profile = reference_profile());

}  // namespace glmrt::test_support
