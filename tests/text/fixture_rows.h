// Reads the JSON-lines fixtures of tests/fixtures/tokenizer.
#pragma once

#include <cstdlib>

#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace glmrt::text::testing {

inline std::string tokenizer_fixture(const std::string& relative) {
  return std::string(GLMRT_FIXTURES) + "/tokenizer/" + relative;
}

// One JSON object per line; ordered_json keeps the key order of the file.
inline std::vector<nlohmann::ordered_json> read_json_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<nlohmann::ordered_json> rows;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) rows.push_back(nlohmann::ordered_json::parse(line));
  return rows;
}

/// Where the real chat templates are at test time: $GLMRT_CHAT_TEMPLATES, the
/// folder tests/text/chat_templates_npm/extract.mjs fills from the npm packages
/// that ship them (the repository never copies template texts); empty when
/// unset.
inline std::string chat_template_dir() {
  const char* dir = std::getenv("GLMRT_CHAT_TEMPLATES");
  return dir ? std::string(dir) : std::string();
}

}  // namespace glmrt::text::testing
