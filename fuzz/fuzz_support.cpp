#include "fuzz_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace glmrt::fuzz {

void expect(bool condition, std::string_view what) {
  if (!condition) throw InvariantBroken(std::string(what));
}

void refused(const std::exception& error) {
  if (std::getenv("GLMRT_FUZZ_VERBOSE") != nullptr)
    std::fprintf(stderr, "refused: %s\n", error.what());
}

ScratchDir::ScratchDir(std::string_view tag)
    : path_(std::filesystem::temp_directory_path() /
            ("glmrt-fuzz-" + std::string(tag) + "-" + std::to_string(::getpid()))) {
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;  // a destructor must not throw; a leftover folder is harmless
  std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path ScratchDir::folder(std::string_view name) const {
  const std::filesystem::path folder = path_ / name;
  std::filesystem::create_directories(folder);
  return folder;
}

std::filesystem::path ScratchDir::fresh_folder(std::string_view name) const {
  const std::filesystem::path folder = path_ / name;
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

std::filesystem::path ScratchDir::write(const std::filesystem::path& folder, std::string_view name,
                                        std::string_view bytes) {
  const std::filesystem::path file = folder / name;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  // A harness that cannot write its input would test nothing: say so loudly.
  if (!out) throw std::runtime_error("fuzz harness: cannot write " + file.string());
  return file;
}

std::vector<std::string_view> split(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const size_t at = text.find(separator);
    if (at == std::string_view::npos) break;
    parts.push_back(text.substr(0, at));
    text.remove_prefix(at + separator.size());
  }
  parts.push_back(text);
  return parts;
}

}  // namespace glmrt::fuzz
