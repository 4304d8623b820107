// The io conformance checks of ABI 1.6: urgent batches and cancellation.
#pragma once

#include <glmrt/conformance/check_report.h>
#include <glmrt/plugin/io.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace glmrt::conformance {

/// Checks Io::submit_urgent and Io::cancel on file 0 of the plugin's open
/// set, whose bytes are `file` (at least 768 KiB); one skip for a plugin
/// older than ABI 1.6 or of an alignment above 64 KiB.
void check_io_priority(CheckReport& report, plugin::Io& io, int abi_minor, uint32_t alignment,
                       std::span<const std::byte> file);

}  // namespace glmrt::conformance
