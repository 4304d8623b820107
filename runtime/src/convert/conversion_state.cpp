#include "conversion_state.h"

#include <glmrt/base/error.h>
#include <glmrt/convert/streamed_file_writer.h>
#include <glmrt/model_maker/output_directory.h>

#include <fmt/format.h>

#include "../model_files/file_io.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr const char* kStateFile = ".convert-state.json";

}  // namespace

ConversionState ConversionState::resume(const fs::path& partial, uint64_t fingerprint, bool force) {
  ConversionState s;
  s.folder_ = partial;
  s.fingerprint_ = fingerprint;
  if (!fs::exists(partial)) return s;
  const fs::path file = partial / kStateFile;
  bool same = false;
  if (fs::exists(file)) {
    try {
      const ordered_json j = ordered_json::parse(model_files::read_whole_file(file));
      same = j.at("fingerprint").get<std::string>() == hash_hex(fingerprint);
      if (same)
        for (const auto& [name, e] : j.at("files").items())
          s.files_[name] = {e.at("bytes").get<uint64_t>(),
                            std::stoull(e.at("xxh3").get<std::string>(), nullptr, 16)};
    } catch (const std::exception& e) {
      fail("{}: unreadable conversion state ({}); remove {} or pass --force", file, e.what(),
           partial);
    }
    if (!same && !force)
      fail(
          "{} holds an unfinished conversion made with other options or from another input; "
          "pass --force to discard it (or remove it)",
          partial);
  }
  if (!same) {
    fs::remove_all(partial);
    s.files_.clear();
  }
  return s;
}

bool ConversionState::still_valid(const std::string& name, uint64_t bytes) {
  const auto it = files_.find(name);
  if (it == files_.end()) return false;
  const fs::path path = folder_ / name;
  std::error_code ec;
  const bool ok = it->second.bytes == bytes && fs::exists(path, ec) &&
                  fs::file_size(path, ec) == bytes && hash_file(path) == it->second.hash;
  if (!ok) files_.erase(it);
  return ok;
}

void ConversionState::remove_unfinished_files() const {
  if (!fs::exists(folder_)) return;
  for (const auto& entry : fs::directory_iterator(folder_)) {
    const std::string name = entry.path().filename().string();
    if (name != kStateFile && !files_.contains(name)) fs::remove_all(entry.path());
  }
}

void ConversionState::finished(const std::string& name, uint64_t bytes, uint64_t hash) {
  files_[name] = {bytes, hash};
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
