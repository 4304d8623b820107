#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/distributed/model_manifest.h>
#include <glmrt/model_files/container_checksums.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/safetensors.h>

#include <fmt/format.h>

#include <algorithm>

namespace glmrt {

namespace fs = std::filesystem;

std::vector<ManifestEntry> model_manifest(const fs::path& model_dir) {
  std::vector<ManifestEntry> entries;
  std::error_code ec;
  if (is_gguf_model(model_dir)) {
    // A GGUF model's shards by name and size (the file carries no checksums).
    for (const fs::path& shard : gguf::model_file_paths(model_dir))
      entries.push_back({shard.filename().string(), fs::file_size(shard), {}});
  } else if (fs::exists(model_dir / kChecksumsFile, ec)) {
    for (ChecksumEntry& e : read_container_checksums(model_dir))
      entries.push_back({std::move(e.name), e.bytes, std::move(e.xxh3)});
  } else {
    for (const fs::directory_entry& f : fs::directory_iterator(model_dir)) {
      if (f.path().extension() != ".safetensors" || !f.is_regular_file()) continue;
      entries.push_back({f.path().filename().string(), f.file_size(), {}});
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const ManifestEntry& a, const ManifestEntry& b) { return a.file < b.file; });
  return entries;
}

namespace {

std::string described(const ManifestEntry& e) {
  return e.xxh3.empty() ? fmt::format("{} bytes", e.bytes)
                        : fmt::format("{} bytes with XXH3 {}", e.bytes, printable(e.xxh3, 32));
}

}  // namespace

std::optional<std::string> manifest_difference(const std::vector<ManifestEntry>& ours,
                                               const std::vector<ManifestEntry>& theirs) {
  if (ours == theirs) return std::nullopt;
  const auto find = [](const std::vector<ManifestEntry>& list, const std::string& file) {
    const auto it = std::find_if(list.begin(), list.end(),
                                 [&](const ManifestEntry& e) { return e.file == file; });
    return it == list.end() ? nullptr : &*it;
  };
  for (const ManifestEntry& o : ours) {
    const ManifestEntry* t = find(theirs, o.file);
    if (!t)
      return fmt::format("`{}` ({} on rank 0) is not listed there", printable(o.file, 256),
                         described(o));
    if (!(*t == o))
      return fmt::format("`{}` is {} there, {} on rank 0", printable(o.file, 256), described(*t),
                         described(o));
  }
  for (const ManifestEntry& t : theirs)
    if (!find(ours, t.file))
      return fmt::format("`{}` ({} there) is not listed on rank 0", printable(t.file, 256),
                         described(t));
  return std::nullopt;
}

}  // namespace glmrt
