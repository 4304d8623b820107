#include <glmrt/base/error.h>
#include <glmrt/validate/oracle.h>

#include <nlohmann/json.hpp>

#include <fstream>

namespace glmrt {
namespace {

template <typename T>
T field(const nlohmann::json& j, const char* key, const std::filesystem::path& file,
        const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) fail("{}: {} has no field `{}`", file, where, key);
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    fail("{}: {} field `{}` has the wrong type ({})", file, where, key, e.what());
  }
}

}  // namespace

std::vector<OracleCase> load_oracle(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) fail("cannot open reference file {}", file);
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON ({})", file, e.what());
  }
  if (!root.is_object() || !root.contains("cases") || !root["cases"].is_array())
    fail("{}: expected an object with a `cases` array", file);
  std::vector<OracleCase> cases;
  for (size_t i = 0; i < root["cases"].size(); ++i) {
    const auto& j = root["cases"][i];
    const std::string where = fmt::format("case {}", i);
    OracleCase c;
    c.name = field<std::string>(j, "name", file, where);
    c.prompt_ids = field<std::vector<int32_t>>(j, "prompt_ids", file, c.name);
    c.generated_ids = field<std::vector<int32_t>>(j, "generated_ids", file, c.name);
    c.full_ids = field<std::vector<int32_t>>(j, "full_ids", file, c.name);
    c.tf_pred = field<std::vector<int32_t>>(j, "tf_pred", file, c.name);
    c.margin = field<std::vector<double>>(j, "margin", file, c.name);
    c.logits = field<std::vector<std::vector<double>>>(j, "logits", file, c.name);
    c.dense_equivalent = field<bool>(j, "dense_equivalent", file, c.name);
    c.sparse_rows_from = field<int64_t>(j, "sparse_rows_from", file, c.name);
    if (j.contains("mtp_pred")) {
      c.mtp_pred = field<std::vector<int32_t>>(j, "mtp_pred", file, c.name);
      c.mtp_margin = field<std::vector<double>>(j, "mtp_margin", file, c.name);
      if (c.mtp_pred.size() != c.mtp_margin.size() || c.mtp_pred.size() + 1 != c.full_ids.size())
        fail("{}: case {}: mtp_pred and mtp_margin need one row per position but the last", file,
             c.name);
    }
    if (c.logits.size() != c.full_ids.size() || c.margin.size() != c.full_ids.size() ||
        c.tf_pred.size() != c.full_ids.size())
      fail("{}: case {}: logits, margin and tf_pred need one row per full_ids position", file,
           c.name);
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace glmrt
