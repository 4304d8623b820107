// `glmrt plugins test PATH`: the conformance checks for a plugin of any kind.
#pragma once

#include <glmrt/conformance/check_report.h>

#include <filesystem>

namespace glmrt::conformance {

/// Checks an io plugin: creation, settings rejection, alignment, reading
/// batches of extents from temporary files byte for byte, prefetch, and a
/// read past the end of a file failing with a message.
CheckReport run_io_conformance(const std::filesystem::path& plugin_file);

/// Checks a draft plugin: descriptor, creation, settings rejection, and that
/// proposals stay within max_tokens and the vocabulary against a stub model.
CheckReport run_draft_conformance(const std::filesystem::path& plugin_file);

/// Reads the plugin's descriptor and runs the suite of its kind. The first
/// check is the descriptor itself; a plugin this CPU does not support is
/// reported as one skip.
CheckReport run_plugin_conformance(const std::filesystem::path& plugin_file);

}  // namespace glmrt::conformance
