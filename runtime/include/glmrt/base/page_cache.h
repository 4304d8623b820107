// Dropping a file's pages from the page cache, so the next read of it comes
// from the disk: what a cold-start benchmark needs between repetitions,
// without touching the rest of the machine's cache (drop_caches would).
#pragma once

#include <filesystem>
#include <string>

namespace glmrt {

/// Writes back nothing (the files are read-only to us) and asks the kernel to
/// drop the file's cached pages (posix_fadvise DONTNEED). Empty on success,
/// else why not. Pages another process keeps mapped may stay.
std::string evict_from_page_cache(const std::filesystem::path& file);

}  // namespace glmrt
