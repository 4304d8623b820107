// The record a conversion keeps in OUT.partial/.convert-state.json: what it
// is making (a fingerprint of the plan and the input) and each output file
// finished so far with its size and XXH3-64. It is rewritten atomically
// (temporary file + rename) after every finished file, so an interruption at
// any moment leaves a record that tells the truth.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace glmrt {

class ConversionState {
 public:
  /// Reads `partial`'s state. A folder without a state file holds no
  /// finished file and is emptied; one made for another fingerprint is
  /// refused unless `force` (then emptied).
  static ConversionState resume(const std::filesystem::path& partial, uint64_t fingerprint,
                                bool force);

  /// True when `name` was finished with `bytes` bytes and its checksum still
  /// matches what is on disk (read back); otherwise forgets it.
  bool still_valid(const std::string& name, uint64_t bytes);
  /// Removes the folder's files that are not recorded as finished.
  void remove_unfinished_files() const;
  /// Records a finished file and saves the state.
  void finished(const std::string& name, uint64_t bytes, uint64_t hash);
  /// {"hash": "xxh3-64", "files": {name: {"bytes": N, "xxh3": "hex"}}}
  nlohmann::ordered_json checksums() const;
  void remove_state_file() const;

 private:
  struct Entry {
    uint64_t bytes = 0, hash = 0;
  };
  void save() const;

  std::filesystem::path folder_;
  uint64_t fingerprint_ = 0;
  std::map<std::string, Entry> files_;
};

}  // namespace glmrt
