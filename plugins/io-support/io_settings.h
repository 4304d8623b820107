// The settings the in-tree io plugins accept from a profile's
// plugins.io.settings, each plugin with its own bounds and defaults.
#pragma once

#include "byte_rate_limit.h"

#include <glmrt/plugin/abi.h>

#include <cstddef>
#include <string>
#include <vector>

namespace glmrt::io_support {

/// One more copy of the model's files (`mirrors`): an absolute folder laid
/// out like the model's own, on another drive, and its own read cap.
struct MirrorEntry {
  std::string folder;
  uint64_t max_bytes_per_second = 0;  // 0 = none
};

struct IoSettings {
  /// Reads in flight at once (reader threads borrowed from the host); 0 =
  /// the host's thread count.
  int threads = 0;
  /// Drop read pages from the page cache (POSIX_FADV_DONTNEED) once copied.
  bool drop_after_read = false;
  /// The most bytes per second the plugin reads, all files and threads
  /// together (0 = no cap): `max_bytes_per_second`, a count or a size such
  /// as 500MB or 1.5GiB.
  uint64_t max_bytes_per_second = 0;
  /// The unused rate a cap (that one and each mirror's) keeps as credit
  /// while idle: `cap_credit_seconds`, 0 to 1 (0: a read after an idle
  /// spell is paced like any other, as on a real drive).
  ByteRateLimit::Clock::duration cap_credit = ByteRateLimit::kBurst;
  /// More copies of the model's files, one entry per line (a YAML list in a
  /// profile): `FOLDER` or `FOLDER@RATE`, each read sent to the least busy
  /// copy (file_copies.h).
  std::vector<MirrorEntry> mirrors;
};

/// What one plugin accepts.
struct IoSettingsRules {
  const char* plugin;  // starts every message
  IoSettings defaults;
  int max_threads;
  bool takes_drop_after_read;
};

/// The settings as `rules` allow them (the defaults for keys not given); an
/// unknown key or a bad value returns false with the reason in `error`.
bool parse_io_settings(const IoSettingsRules& rules, const glmrt_setting* settings,
                       size_t n_settings, IoSettings& out, std::string& error);

/// parse_io_settings under IoType::kSettingsRules, as create_plugin takes it.
template <typename IoType>
bool parse_io_settings_of(const glmrt_setting* settings, size_t n_settings, IoSettings& out,
                          std::string& error) {
  return parse_io_settings(IoType::kSettingsRules, settings, n_settings, out, error);
}

}  // namespace glmrt::io_support
