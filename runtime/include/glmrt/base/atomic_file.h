// Every file glmrt writes goes through here, under one rule:
// - the bytes go to a new temporary file beside it, and only a commit renames
//   that over the file: whatever goes wrong before (a full disk, an I/O
//   error, an exception) leaves the old file as it was and removes the
//   temporary;
// - nothing is written inside the model folder the command reads, nor over
//   one of its files (links resolved), even with --force;
// - a device, a FIFO, a socket or a folder at the path is refused naming
//   what it is, and never renamed over, even with --force;
// - an existing regular file is replaced only when it is empty or holds the
//   kind of file being written (an earlier export, image, trace...), so a
//   mistyped path never costs a profile, a text or a shard; --force lets it
//   replace any other regular file.
// The rule is checked when the temporary is created and again just before
// the rename. A command that works long before it writes checks it first with
// check_output_file.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace glmrt {

/// What a writer writes, for the rule on a file already at its path.
struct OutputKind {
  /// "a routing trace": messages read "FILE: exists and is not a routing trace".
  std::string what = "a file";
  /// Whether the (non-empty, regular) file at the path holds this kind: an
  /// earlier output, replaced without --force. Empty: any regular file is
  /// (glmrt's own files, in its cache folder).
  std::function<bool(const std::filesystem::path&)> recognises;
};

/// Where a file may be written.
struct OutputRule {
  OutputKind kind;
  /// The model folder the command reads (empty: none): never written into,
  /// nor over a file it holds or links to, even with --force.
  std::filesystem::path model_folder;
  /// --force: an existing regular file of another kind is replaced too.
  bool force = false;
};

/// Throws glmrt::Error naming `file` and the reason unless `rule` lets a
/// file be written at `file` (see the top of this header).
void check_output_file(const std::filesystem::path& file, const OutputRule& rule);

/// Up to `max_bytes` from the start of the regular file `file` (opened
/// without blocking), for OutputKind::recognises; empty when it cannot be
/// read.
std::string read_file_head(const std::filesystem::path& file, size_t max_bytes);

/// Creates a new file beside `file`, named after it, this process and `tag`
/// (never an existing one: O_EXCL), for writing; returns its descriptor and
/// sets `created` to its path. Throws naming the path and the reason.
int create_file_beside(const std::filesystem::path& file, std::string_view tag,
                       std::filesystem::path& created);

class AtomicFile {
 public:
  /// Checks `rule` (check_output_file) and creates the temporary beside `file`.
  explicit AtomicFile(std::filesystem::path file, OutputRule rule = {});
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  /// Removes the temporary unless committed.
  ~AtomicFile();

  /// Appends `text`; throws naming the file and the system's reason.
  void write(std::string_view text);
  /// fsync, close, the rule checked again, rename over the file, fsync of the
  /// folder. `before_rename` (tests) runs between the fsync and the rename;
  /// if it throws, nothing is renamed.
  void commit(const std::function<void()>& before_rename = {});

  const std::filesystem::path& file() const { return file_; }
  const std::filesystem::path& temporary() const { return temporary_; }

 private:
  std::filesystem::path file_, temporary_;
  OutputRule rule_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes `text` to `file` atomically with an AtomicFile (under `rule`).
/// Throws glmrt::Error naming the file; the old file is then untouched and
/// the temporary file removed.
void write_file_atomically(const std::filesystem::path& file, std::string_view text,
                           const std::function<void()>& before_rename = {});
void write_file_atomically(const std::filesystem::path& file, std::string_view text,
                           const OutputRule& rule);

/// Whether `inner` is `outer` or lies inside it, component by component
/// (both absolute with links resolved: no `..` is interpreted here).
bool path_within(const std::filesystem::path& inner, const std::filesystem::path& outer);

}  // namespace glmrt
