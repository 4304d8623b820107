// Warnings and notes: conditions the user should know about that do not stop
// the run (a layer count the checkpoint contradicts is an error; tensors
// nothing uses are a warning). They go to stderr, never stdout, so a
// command's stdout stays its result alone (one JSON document under --json).
#pragma once

#include <fmt/format.h>
#include <fmt/std.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace glmrt {

namespace warning_detail {

// A warning that cannot be written (stderr closed) must not end the run.
inline void print_to_stderr(std::string_view label, const std::string& message) {
  const std::string line = fmt::format("glmrt: {}: {}\n", label, message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace warning_detail

/// Prints "glmrt: warning: MESSAGE" on stderr.
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  warning_detail::print_to_stderr("warning", fmt::format(format, std::forward<Args>(args)...));
}

/// Prints "glmrt: note: MESSAGE" on stderr: expected, but worth knowing.
template <typename... Args>
void note(fmt::format_string<Args...> format, Args&&... args) {
  warning_detail::print_to_stderr("note", fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace glmrt
