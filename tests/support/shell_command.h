// Runs a shell command from a test (glmrt's command line, a script).
#pragma once

#include <string>
#include <utility>

namespace glmrt::test {

/// The command's exit status (-1 when it did not exit normally or could not
/// start) and what it wrote on stdout.
std::pair<int, std::string> run_shell(const std::string& command);

}  // namespace glmrt::test
