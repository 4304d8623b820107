// glmrt's version as `glmrt --version` prints it and /props reports it: the
// CMake project version and, when built from a git checkout, `git describe`
// at build time (cmake/write_version.cmake generates the definition).
#pragma once

#include <string_view>

namespace glmrt::cli {

/// "0.1.0" or "0.1.0 (git v0.1.0-12-gabc1234-dirty)".
std::string_view version_text();

}  // namespace glmrt::cli
