// What the host checks in a plugin before it calls anything the plugin gave:
// the entry symbol is a function, and the descriptor it returns lies in
// loaded memory, has a sane size, a known kind, terminated printable
// strings and functions that point to code. A plugin failing one is refused
// with a message naming the file and the field, never called into.
#pragma once

#include <glmrt/plugin/abi.h>

#include <string>

namespace glmrt {

/// The most bytes a descriptor of ABI 1.x may claim (it is 56 today and only
/// grows at its end, by a pointer or two per minor).
inline constexpr uint32_t kMaxDescriptorBytes = 4096;

/// `dl_handle`'s entry point, checked to be a function (an ELF symbol of type
/// STT_FUNC), before it is called; `shown_file` names the file in errors.
glmrt_describe_fn checked_entry_point(void* dl_handle, const std::string& shown_file);

/// Throws naming `shown_file` and the field when `descriptor` (what the entry
/// point returned) is NULL or malformed; see the file's comment.
void check_descriptor(const glmrt_plugin_descriptor* descriptor, const std::string& shown_file);

/// Throws when the probe wrote a reason that is not terminated within its array.
void check_probe_result(const glmrt_probe_result& probe, const std::string& shown_file);

}  // namespace glmrt
