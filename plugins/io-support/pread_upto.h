// Reading one extent of a plain file with pread: as many calls as it takes,
// retried on EINTR, stopping early only at the end of the file (which the
// byte count then tells the host).
#pragma once

#include "open_file.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace glmrt::io_support {

/// Reads up to `length` bytes at `offset` of `file` into `destination`;
/// `done` is what arrived. Empty on success, else "PLUGIN: reading PATH at
/// offset O (N bytes): why", O and N where the failing call started.
std::string pread_upto(std::string_view plugin, const OpenFile& file, uint64_t offset,
                       uint64_t length, std::byte* destination, uint64_t& done);

}  // namespace glmrt::io_support
