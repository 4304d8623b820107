// ref.json: parsing and the self-consistency checks that make a comparison
// against it meaningful.
#include <glmrt/base/error.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/text_file.h>
#include <glmrt/validate/oracle.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>

namespace glmrt {
namespace {

class CaseReader {
 public:
  CaseReader(const nlohmann::json& j, const std::filesystem::path& file, std::string where)
      : j_(j), file_(file), where_(std::move(where)) {}

  template <typename T>
  T field(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end()) fail("{}: {} has no field `{}`", file_, where_, key);
    try {
      return it->get<T>();
    } catch (const nlohmann::json::exception& e) {
      fail("{}: {} field `{}` has the wrong type ({})", file_, where_, key, e.what());
    }
  }
  bool has(const char* key) const { return j_.contains(key); }

  /// {"<layer>": [[int, ...], ...]} as layer -> rows.
  std::map<int, std::vector<std::vector<int32_t>>> layer_rows(const char* key) const {
    std::map<int, std::vector<std::vector<int32_t>>> out;
    const auto by_layer = field<std::map<std::string, std::vector<std::vector<int32_t>>>>(key);
    for (const auto& [name, rows] : by_layer) {
      int layer = -1;
      const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), layer);
      if (ec != std::errc() || end != name.data() + name.size() || layer < 0)
        fail("{}: {} field `{}`: `{}` is not a layer index", file_, where_, key, name);
      out[layer] = rows;
    }
    return out;
  }

  [[noreturn]] void error(const std::string& what) const {
    fail("{}: {}: {}", file_, where_, what);
  }

 private:
  const nlohmann::json& j_;
  const std::filesystem::path& file_;
  std::string where_;
};

void check_case(const OracleCase& c, const CaseReader& r) {
  const size_t P = c.prompt_ids.size(), G = c.generated_ids.size(), T = c.full_ids.size();
  if (P == 0) r.error("`prompt_ids` is empty");
  if (T < P || !std::equal(c.prompt_ids.begin(), c.prompt_ids.end(), c.full_ids.begin()))
    r.error("`prompt_ids` is not a prefix of `full_ids`");
  // full_ids is the prompt plus every generated token, or all but the last
  // (which only the final logits predict).
  if (T != P + G && !(G > 0 && T == P + G - 1))
    r.error(
        fmt::format("`full_ids` has {} tokens; `prompt_ids` ({}) + `generated_ids` ({}) "
                    "needs {} (or one fewer)",
                    T, P, G, P + G));
  for (size_t i = 0; P + i < T; ++i)
    if (c.full_ids[P + i] != c.generated_ids[i])
      r.error(fmt::format("`generated_ids`[{}] = {} but `full_ids`[{}] = {}", i, c.generated_ids[i],
                          P + i, c.full_ids[P + i]));
  if (c.logits.size() != T || c.margin.size() != T || c.tf_pred.size() != T)
    r.error(
        fmt::format("`logits` ({}), `margin` ({}) and `tf_pred` ({}) need one row per "
                    "`full_ids` position ({})",
                    c.logits.size(), c.margin.size(), c.tf_pred.size(), T));
  const size_t V = c.logits.front().size();
  if (V == 0) r.error("`logits` rows are empty");
  for (size_t t = 0; t < T; ++t) {
    if (c.logits[t].size() != V)
      r.error(fmt::format("`logits`[{}] has {} columns, row 0 has {}", t, c.logits[t].size(), V));
    for (double v : c.logits[t])
      if (!std::isfinite(v)) r.error(fmt::format("`logits`[{}] holds a non-finite value", t));
    if (!(c.margin[t] >= 0)) r.error(fmt::format("`margin`[{}] is not a number >= 0", t));
  }
  if (c.sparse_rows_from < 0) r.error("`sparse_rows_from` is negative");
  if (!c.mtp_pred.empty() || !c.mtp_margin.empty()) {
    if (c.mtp_pred.size() != c.mtp_margin.size() || c.mtp_pred.size() + 1 != T)
      r.error(
          fmt::format("`mtp_pred` ({}) and `mtp_margin` ({}) need one row per position but "
                      "the last ({})",
                      c.mtp_pred.size(), c.mtp_margin.size(), T - 1));
  }
  for (const auto& [layer, rows] : c.experts)
    if (rows.size() > T)
      r.error(fmt::format("`experts`[\"{}\"] has {} rows for {} positions", layer, rows.size(), T));
  for (const auto& [layer, rows] : c.indexer_topk)
    if (rows.size() > T)
      r.error(fmt::format("`indexer_topk`[\"{}\"] has {} rows for {} positions", layer, rows.size(),
                          T));
}

}  // namespace

std::vector<OracleCase> load_oracle(const std::filesystem::path& file) {
  const std::string text = read_text_file(file, "the reference file (ref.json)");
  require_json_nesting_within(text, file.string());
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON ({})", file, e.what());
  }
  if (!root.is_object() || !root.contains("cases") || !root["cases"].is_array())
    fail("{}: expected an object with a `cases` array", file);
  if (root["cases"].empty())
    fail("{}: the `cases` array is empty: there is nothing to validate against", file);
  std::vector<OracleCase> cases;
  for (size_t i = 0; i < root["cases"].size(); ++i) {
    const auto& j = root["cases"][i];
    if (!j.is_object()) fail("{}: case {} is not an object", file, i);
    OracleCase c;
    c.name = CaseReader(j, file, fmt::format("case {}", i)).field<std::string>("name");
    const CaseReader r(j, file, fmt::format("case {} ({})", i, c.name));
    c.prompt_ids = r.field<std::vector<int32_t>>("prompt_ids");
    c.generated_ids = r.field<std::vector<int32_t>>("generated_ids");
    c.full_ids = r.field<std::vector<int32_t>>("full_ids");
    c.tf_pred = r.field<std::vector<int32_t>>("tf_pred");
    c.margin = r.field<std::vector<double>>("margin");
    c.logits = r.field<std::vector<std::vector<double>>>("logits");
    c.dense_equivalent = r.field<bool>("dense_equivalent");
    c.sparse_rows_from = r.field<int64_t>("sparse_rows_from");
    if (r.has("mtp_pred") || r.has("mtp_margin")) {
      c.mtp_pred = r.field<std::vector<int32_t>>("mtp_pred");
      c.mtp_margin = r.field<std::vector<double>>("mtp_margin");
    }
    if (r.has("indexer_topk")) c.indexer_topk = r.layer_rows("indexer_topk");
    if (r.has("experts")) c.experts = r.layer_rows("experts");
    check_case(c, r);
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace glmrt
