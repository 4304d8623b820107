// Writes variants of glm_tiny's config.json into a temporary model directory.
#pragma once

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include <glmrt/model_files/model_config.h>
#include "test_files.h"

namespace glmrt::test {

inline nlohmann::json tiny_config_json() {
  std::ifstream in(std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny" / "config.json");
  return nlohmann::json::parse(in);
}

class ConfigVariant {
 public:
  /// glm_tiny's config.json after `edit`.
  explicit ConfigVariant(const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json config = tiny_config_json();
    edit(config);
    write_file(file(), config.dump(2));
  }
  std::filesystem::path dir() const { return tmp_.path(); }
  std::filesystem::path file() const { return tmp_.path() / "config.json"; }
  ModelConfig load() const { return load_model_config(dir()); }
  /// Expects loading to fail naming the file and every one of `needles`.
  void expect_refused(std::vector<std::string> needles) const {
    needles.push_back(file().string());
    expect_error([&] { load(); }, needles);
  }

 private:
  TempDir tmp_;
};

}  // namespace glmrt::test
