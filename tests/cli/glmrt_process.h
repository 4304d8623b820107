// Runs the glmrt executable of this build as a user would, with stdout sent
// to a file, to /dev/full or to a pipe whose reader has already gone.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace glmrt::test {

enum class Stdout {
  captured,     // a temporary file, returned in `out`
  full_device,  // /dev/full: every write fails with ENOSPC
  closed_pipe,  // a pipe with no reader: every write fails with EPIPE
};

struct ProcessResult {
  int exit_status = -1;  // when it exited
  int signal = 0;        // when a signal ended it
  std::string out, err;
};

/// Runs `glmrt args...` with `stdin_text` on stdin; waits for it to end.
ProcessResult run_glmrt(const std::vector<std::string>& args, Stdout out = Stdout::captured,
                        const std::string& stdin_text = "");

/// Runs `program args...` with exactly `environment` ("NAME=value" entries),
/// stdout captured and nothing on stdin.
ProcessResult run_with_environment(const std::string& program, const std::vector<std::string>& args,
                                   const std::vector<std::string>& environment);

/// Fixtures and configs of the source tree, for arguments.
std::string tiny_model();
std::string reference_profile();

}  // namespace glmrt::test
