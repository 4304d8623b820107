// Reading a whole input file (profile, tokenizer, request) with errors that
// say which file and what it should have been. Header-only: the text library
// does not link the core.
#pragma once

#include <glmrt/base/error.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace glmrt {

/// The bytes of `file`. `what` names what it should hold ("the profile",
/// "the tokenizer file"): errors read "FILE: cannot read WHAT: REASON", and a
/// folder is reported as one (std::ifstream opens folders and reads nothing,
/// which parsers then call invalid input).
inline std::string read_text_file(const std::filesystem::path& file, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    fail("{}: cannot read {}: it is a directory, expected a file", file.string(), what);
  std::ifstream in(file, std::ios::binary);
  if (!in) fail("{}: cannot read {}: {}", file.string(), what, std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) fail("{}: cannot read {}: {}", file.string(), what, std::strerror(errno));
  return std::move(content).str();
}

}  // namespace glmrt
