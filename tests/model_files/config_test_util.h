// Writes variants of a fixture's config.json (glm_tiny's unless named) into a
// temporary model directory.
#pragma once

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include <glmrt/model_files/model_config.h>
#include "test_files.h"

namespace glmrt::test {

inline nlohmann::json tiny_config_json(const std::string& fixture = "glm_tiny") {
  std::ifstream in(std::filesystem::path(GLMRT_FIXTURES) / fixture / "config.json");
  return nlohmann::json::parse(in);
}

class ConfigVariant {
 public:
  /// The fixture's config.json after `edit`.
  explicit ConfigVariant(const std::function<void(nlohmann::json&)>& edit,
                         const std::string& fixture = "glm_tiny") {
    nlohmann::json config = tiny_config_json(fixture);
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
  TempFolder tmp_;
};

}  // namespace glmrt::test
