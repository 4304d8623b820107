// The record a conversion keeps in OUT.partial/.convert-state.json: what it
// is making (a fingerprint of the plan and the options) and each output file
// finished so far with its size, its XXH3-64 and the checksum of the source
// bytes it was made of (source_checksum.h). It is rewritten atomically
// (temporary file + rename) after every finished file, so an interruption at
// any moment leaves a record that tells the truth.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace glmrt {

/// The state file's name in OUT.partial.
inline constexpr const char* kConversionStateFile = ".convert-state.json";

class ConversionState {
 public:
  /// Reads `partial`'s state, creating the folder (with a state file) when
  /// absent. It may hold only files a conversion writes: anything else is
  /// refused, even with `force`. Without a state file, or made for another
  /// fingerprint, it is refused unless `force` (then its files are removed).
  static ConversionState resume(const std::filesystem::path& partial, uint64_t fingerprint,
                                bool force);

  /// Whether `name` is recorded as finished.
  bool recorded(const std::string& name) const { return files_.contains(name); }
  /// True when `name` was finished with `bytes` bytes, its checksum still
  /// matches what is on disk (read back) and `source_checksum()` (called
  /// only then) the one of the sources it was made of; otherwise forgets it.
  bool still_valid(const std::string& name, uint64_t bytes,
                   const std::function<uint64_t()>& source_checksum);
  /// Removes the folder's files that are not recorded as finished.
  void remove_unfinished_files() const;
  /// Records a finished file and saves the state.
  void finished(const std::string& name, uint64_t bytes, uint64_t hash, uint64_t source);
  /// {"hash": "xxh3-64", "files": {name: {"bytes": N, "xxh3": "hex"}}}
  nlohmann::ordered_json checksums() const;
  void remove_state_file() const;

 private:
  struct Entry {
    uint64_t bytes = 0, hash = 0, source = 0;
  };
  void save() const;

  std::filesystem::path folder_;
  uint64_t fingerprint_ = 0;
  std::map<std::string, Entry> files_;
};

}  // namespace glmrt
