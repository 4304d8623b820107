#include "conversion_state.h"

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/convert/streamed_file_writer.h>
#include <glmrt/model_maker/output_directory.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <glmrt/model_files/file_io.h>
#include "convert_destination.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr const char* kStateFile = kConversionStateFile;

// Throws naming what in `partial` a conversion did not write: --force
// discards an unfinished conversion, never anything else.
void refuse_foreign_files(const fs::path& partial) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(partial, ec)))
    fail("{} exists and is not a folder: convert keeps its unfinished output there; remove it",
         partial);
  std::vector<std::string> foreign;
  for (const auto& entry : fs::directory_iterator(partial)) {
    const std::string name = entry.path().filename().string();
    if (!is_conversion_file_name(name) || entry.is_symlink() || !entry.is_regular_file())
      foreign.push_back(printable(name));
  }
  std::sort(foreign.begin(), foreign.end());
  if (!foreign.empty())
    fail(
        "{} holds {}, which glmrt convert did not write: it is left as it is, even with --force; "
        "move {} away or remove the folder",
        partial, fmt::join(foreign, ", "), foreign.size() == 1 ? "it" : "them");
}

void remove_files_in(const fs::path& folder) {
  for (const auto& entry : fs::directory_iterator(folder)) {
    std::error_code ec;
    fs::remove(entry.path(), ec);
    if (ec) fail("cannot remove {}: {}", entry.path(), ec.message());
  }
}

}  // namespace

ConversionState ConversionState::resume(const fs::path& partial, uint64_t fingerprint, bool force) {
  ConversionState s;
  s.folder_ = partial;
  s.fingerprint_ = fingerprint;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(partial, ec))) {
    fs::create_directories(partial, ec);
    if (ec) fail("cannot create {}: {}", partial, ec.message());
    s.save();  // from now on the folder says it is a conversion's
    return s;
  }
  refuse_foreign_files(partial);
  const fs::path file = partial / kStateFile;
  bool same = false;
  if (!fs::exists(file) && !fs::is_empty(partial) && !force)
    fail(
        "{} holds files of an unfinished conversion but no {} saying which are finished; pass "
        "--force to discard them (or remove the folder)",
        partial, kStateFile);
  if (fs::exists(file)) {
    bool finished_any = false;
    try {
      const ordered_json j = ordered_json::parse(read_input_file(file, InputKind{"the conversion state", 64 * kInputMiB}));
      same = j.at("fingerprint").get<std::string>() == hash_hex(fingerprint);
      finished_any = !j.at("files").empty();
      if (same)
        for (const auto& [name, e] : j.at("files").items())
          s.files_[name] = {e.at("bytes").get<uint64_t>(),
                            std::stoull(e.at("xxh3").get<std::string>(), nullptr, 16),
                            std::stoull(e.at("source_xxh3").get<std::string>(), nullptr, 16)};
    } catch (const std::exception& e) {
      if (!force)
        fail("{}: unreadable conversion state ({}); remove {} or pass --force", file, e.what(),
             partial);
      same = false;
      s.files_.clear();
    }
    // A conversion that finished no file leaves nothing worth keeping.
    if (!same && finished_any && !force)
      fail(
          "{} holds an unfinished conversion made with other options (or another glmrt version); "
          "pass --force to discard it (or remove it)",
          partial);
  }
  if (!same) {
    remove_files_in(partial);
    s.files_.clear();
    s.save();
  }
  return s;
}

bool ConversionState::still_valid(const std::string& name, uint64_t bytes,
                                  const std::function<uint64_t()>& source_checksum) {
  const auto it = files_.find(name);
  if (it == files_.end()) return false;
  const fs::path path = folder_ / name;
  std::error_code ec;
  const bool ok = it->second.bytes == bytes && fs::exists(path, ec) &&
                  fs::file_size(path, ec) == bytes && hash_file(path) == it->second.hash &&
                  source_checksum() == it->second.source;
  if (!ok) files_.erase(it);
  return ok;
}

void ConversionState::remove_unfinished_files() const {
  if (!fs::exists(folder_)) return;
  for (const auto& entry : fs::directory_iterator(folder_)) {
    const std::string name = entry.path().filename().string();
    if (name != kStateFile && !files_.contains(name)) fs::remove(entry.path());
  }
}

void ConversionState::finished(const std::string& name, uint64_t bytes, uint64_t hash,
                               uint64_t source) {
  files_[name] = {bytes, hash, source};
  save();
}

ordered_json ConversionState::checksums() const {
  ordered_json files = ordered_json::object();
  for (const auto& [name, e] : files_)
    files[name] = {{"bytes", e.bytes}, {"xxh3", hash_hex(e.hash)}};
  return {{"hash", "xxh3-64"}, {"files", files}};
}

void ConversionState::save() const {
  ordered_json j = checksums();
  for (const auto& [name, e] : files_) j["files"][name]["source_xxh3"] = hash_hex(e.source);
  j["fingerprint"] = hash_hex(fingerprint_);
  const fs::path tmp = folder_ / (std::string(kStateFile) + ".tmp");
  std::error_code ec;
  fs::remove(tmp, ec);
  write_small_file(tmp, j.dump(2));
  fs::rename(tmp, folder_ / kStateFile, ec);
  if (ec) fail("cannot rename {} into place: {}", tmp, ec.message());
}

void ConversionState::remove_state_file() const {
  std::error_code ec;
  fs::remove(folder_ / kStateFile, ec);
}

}  // namespace glmrt
