// What every fuzz target shares: the input as bytes, a per-process scratch
// folder for parsers that read files, and a way to report a broken invariant.
//
// Each target is a plain function (see fuzz_targets.h) so the same code runs
// under libFuzzer (clang, fuzz/CMakeLists.txt) and in the GoogleTest replay of
// the corpus (g++, tests/fuzz_corpus), where a reproducer becomes a test.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::fuzz {

using Input = std::span<const std::uint8_t>;

inline std::string_view as_text(Input input) {
  return {reinterpret_cast<const char*>(input.data()), input.size()};
}

/// Thrown when a parser accepted an input but what it returned breaks a
/// documented promise. It is not a glmrt::Error, so no target swallows it:
/// libFuzzer reports it as a crash, the corpus replay as a failed test.
class InvariantBroken : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Throws InvariantBroken with `what` when `condition` is false.
void expect(bool condition, std::string_view what);

/// Called with every glmrt::Error a target catches: prints the message when
/// GLMRT_FUZZ_VERBOSE is set, to see why an input was refused.
void refused(const std::exception& error);

/// A folder of its own under the system temp folder (TMPDIR), removed when the
/// object goes; one per process so parallel fuzz jobs never share files.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view tag);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// Subfolder `name`, made if missing; files a previous input left stay.
  std::filesystem::path folder(std::string_view name) const;
  /// An empty subfolder `name` (whatever a previous input left there is gone).
  std::filesystem::path fresh_folder(std::string_view name) const;
  /// Writes `bytes` to `folder`/`name` and returns that path.
  static std::filesystem::path write(const std::filesystem::path& folder, std::string_view name,
                                     std::string_view bytes);

 private:
  std::filesystem::path path_;
};

/// Splits `text` at every occurrence of `separator`.
std::vector<std::string_view> split(std::string_view text, std::string_view separator);

}  // namespace glmrt::fuzz
