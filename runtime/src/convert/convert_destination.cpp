#include "convert_destination.h"

#include <glmrt/base/atomic_file.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/convert/convert.h>

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <glmrt/model_files/file_io.h>
#include "conversion_state.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;

fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p), ec);
  if (ec) fail("cannot resolve the path {}: {}", p, ec.message());
  return r;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "model-00001-of-00003.safetensors", as shard_name() writes them.
bool is_shard_name(std::string_view name) {
  constexpr std::string_view head = "model-", of = "-of-", tail = ".safetensors";
  if (!name.starts_with(head) || !name.ends_with(tail)) return false;
  name = name.substr(head.size(), name.size() - head.size() - tail.size());
  const size_t at = name.find(of);
  return at != std::string_view::npos && all_digits(name.substr(0, at)) &&
         all_digits(name.substr(at + of.size()));
}

std::string listed(const std::vector<std::string>& names) {
  constexpr size_t kShown = 5;
  std::string s;
  for (size_t i = 0; i < names.size() && i < kShown; ++i)
    s += (i ? ", " : "") + printable(names[i]);
  if (names.size() > kShown) s += fmt::format(" and {} more", names.size() - kShown);
  return s;
}

// The files `out`'s marker lists; throws when there is no readable marker.
std::vector<std::string> marker_files(const fs::path& out) {
  const fs::path marker = out / kContainerMarkerFile;
  std::error_code ec;
  if (!fs::is_regular_file(marker, ec))
    fail(
        "--to {} exists and is not a container written by glmrt convert (it has no {}): "
        "convert replaces only its own output, even with --force; remove it or choose another "
        "folder",
        out, kContainerMarkerFile);
  std::vector<std::string> files;
  try {
    const auto j = nlohmann::json::parse(
        read_input_file(marker, InputKind{"the container marker", 64 * kInputMiB}));
    if (j.value("written_by", "") != "glmrt convert") throw std::runtime_error("not convert's");
    for (const auto& f : j.at("files")) files.push_back(f.get<std::string>());
  } catch (const std::exception& e) {
    fail(
        "{}: not a marker written by glmrt convert ({}): --to {} is left as it is; remove it or "
        "choose another folder",
        marker, e.what(), out);
  }
  for (const auto& name : files)
    if (!is_conversion_file_name(name))
      fail("{} lists `{}`, a name glmrt convert never writes: --to {} is left as it is", marker,
           printable(name), out);
  return files;
}

}  // namespace

bool is_conversion_file_name(const std::string& name) {
  if (is_shard_name(name)) return true;
  for (const char* carried : kCarriedFiles)
    if (name == carried) return true;
  for (const char* own : {"model.safetensors.index.json", "config.json", kChecksumsFile,
                          kContainerMarkerFile, kConversionStateFile})
    if (name == own) return true;
  return name == std::string(kConversionStateFile) + ".tmp";
}

fs::path resolved_output(const fs::path& to) {
  return resolved(to);
}

void check_apart_from_source(const ConvertOptions& o, const TensorDirectory& source,
                             const fs::path& out, const fs::path& partial) {
  const fs::path from = resolved(o.from);
  for (const fs::path& target : {out, resolved(partial)}) {
    if (path_within(target, from))
      fail(
          "--to {}: {} {} --from {}; convert writes its output (and {}) beside the source, "
          "never into it",
          o.to, target, target == from ? "is the source folder" : "lies inside the source folder",
          o.from, partial.filename());
    if (path_within(from, target))
      fail("--to {}: {} holds the source folder --from {}, which replacing it would destroy", o.to,
           target, o.from);
    for (const fs::path& file : source.files())
      if (path_within(resolved(file), target))
        fail("--to {}: {} holds the source file {}, which replacing it would destroy", o.to, target,
             file);
    if (!o.importance.empty() && path_within(resolved(o.importance), target))
      fail("--to {}: {} holds the --importance statistics {}, which replacing it would destroy",
           o.to, target, o.importance);
  }
  std::error_code ec;
  if (fs::is_symlink(partial, ec))
    fail("{} is a symbolic link: convert writes its unfinished output there, remove the link",
         partial);
}

void check_replaceable_output(const fs::path& out, bool force) {
  std::error_code ec;
  const auto status = fs::symlink_status(out, ec);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status)) {
    struct stat st {};
    fail(
        "--to {} exists and is not a folder: it is {}; convert replaces only a container it "
        "wrote, even with --force",
        out, ::lstat(out.c_str(), &st) == 0 ? describe_file_type(st.st_mode) : "unreadable");
  }
  if (fs::is_empty(out, ec)) return;
  const std::vector<std::string> files = marker_files(out);
  std::vector<std::string> foreign;
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    const bool ours =
        name == kContainerMarkerFile || std::find(files.begin(), files.end(), name) != files.end();
    if (!ours || !entry.is_regular_file() || entry.is_symlink()) foreign.push_back(name);
  }
  std::sort(foreign.begin(), foreign.end());
  if (!foreign.empty())
    fail(
        "--to {} is a container written by glmrt convert but also holds {}, which convert did "
        "not write: it is left as it is, even with --force; move them away or choose another "
        "folder",
        out, listed(foreign));
  if (!force) fail("--to {} already exists; pass --force to replace it", out);
}

void remove_replaced_output(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(out, ec))) return;
  if (!fs::is_empty(out, ec)) {
    for (const auto& name : marker_files(out)) {
      fs::remove(out / name, ec);
      if (ec)
        fail("cannot remove {} of the container being replaced: {}", out / name, ec.message());
    }
    fs::remove(out / kContainerMarkerFile, ec);
  }
  fs::remove(out, ec);
  if (ec)
    fail("cannot remove the container {} being replaced: {} (the new one waits in {}.partial)", out,
         ec.message(), out.filename());
}

std::string container_marker(const std::vector<std::string>& files) {
  return nlohmann::ordered_json{{"written_by", "glmrt convert"}, {"version", 1}, {"files", files}}
      .dump(2);
}

}  // namespace glmrt
