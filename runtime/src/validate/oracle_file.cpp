// ref.json: parsing and the self-consistency checks that make a comparison
// against it meaningful.
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>
#include <glmrt/validate/oracle.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <map>

namespace glmrt {
namespace {

using nlohmann::json;

// Reads the fields of one case strictly. nlohmann's get<int>() converts any
// number, silently truncating 2.5 or 2^40 and with undefined behaviour for a
// float beyond the integer's range, so every integer is checked here first.
class CaseReader {
 public:
  CaseReader(const json& object, const std::filesystem::path& file, std::string where)
      : object_(object), file_(file), where_(std::move(where)) {}

  void rename(std::string where) { where_ = std::move(where); }

  std::string text(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) wrong(key, "a string", v);
    return v.get<std::string>();
  }

  bool flag(const char* key) const {
    const json& v = at(key);
    if (!v.is_boolean()) wrong(key, "true or false", v);
    return v.get<bool>();
  }

  int64_t integer(const char* key) const {
    const json& v = at(key);
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > kMaxInt64))
      wrong(key, "an integer", v);
    return v.get<int64_t>();
  }

  // Token ids: integers in 0..2^31-1.
  std::vector<int32_t> ids(const char* key) const {
    std::vector<int32_t> out;
    for (const json& v : array(key)) {
      if (!v.is_number_unsigned() || v.get<uint64_t>() > kMaxId)
        wrong_element(key, out.size(), "a token id (an integer from 0 to 2147483647)", v);
      out.push_back(static_cast<int32_t>(v.get<uint64_t>()));
    }
    return out;
  }

  bool has(const char* key) const { return object_.contains(key); }

  /// {"<layer>": [[id, ...], ...]} as layer -> rows.
  std::map<int, std::vector<std::vector<int32_t>>> layer_rows(const char* key) const {
    const json& v = at(key);
    if (!v.is_object()) wrong(key, "an object of layer index -> rows of ids", v);
    std::map<int, std::vector<std::vector<int32_t>>> out;
    for (const auto& [name, rows] : v.items()) {
      int layer = -1;
      const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), layer);
      if (ec != std::errc() || end != name.data() + name.size() || layer < 0)
        fail("{}: {} field `{}`: `{}` is not a layer index", file_, where_, key, name);
      if (!rows.is_array()) wrong(key, "an object whose values are arrays of rows", rows);
      auto& layer_out = out[layer];
      for (const json& row : rows) {
        if (!row.is_array()) wrong_element(key, layer_out.size(), "an array of token ids", row);
        std::vector<int32_t> ids;
        for (const json& id : row) {
          if (!id.is_number_unsigned() || id.get<uint64_t>() > kMaxId)
            wrong_element(key, layer_out.size(), "a row of integers from 0 to 2147483647", row);
          ids.push_back(static_cast<int32_t>(id.get<uint64_t>()));
        }
        layer_out.push_back(std::move(ids));
      }
    }
    return out;
  }

  [[noreturn]] void error(const std::string& what) const {
    fail("{}: {}: {}", file_, where_, what);
  }

  std::vector<double> numbers(const char* key) const { return numbers_in(array(key), key); }

  std::vector<std::vector<double>> rows(const char* key) const {
    std::vector<std::vector<double>> out;
    for (const json& row : array(key)) {
      if (!row.is_array()) wrong_element(key, out.size(), "an array of numbers", row);
      out.push_back(numbers_in(row, key));
    }
    return out;
  }

 private:
  static constexpr uint64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
  static constexpr uint64_t kMaxId = std::numeric_limits<int32_t>::max();

  const json& at(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) fail("{}: {} has no field `{}`", file_, where_, key);
    return *it;
  }

  const json& array(const char* key) const {
    const json& v = at(key);
    if (!v.is_array()) wrong(key, "an array", v);
    return v;
  }

  std::vector<double> numbers_in(const json& list, const char* key) const {
    std::vector<double> out;
    for (const json& v : list) {
      if (!v.is_number()) wrong_element(key, out.size(), "a number", v);
      out.push_back(v.get<double>());
    }
    return out;
  }

  // Values are shortened: a wrong `logits` field may hold megabytes.
  static std::string shown(const json& v) {
    std::string text = v.dump();
    return text.size() > 60 ? text.substr(0, 57) + "..." : text;
  }

  [[noreturn]] void wrong(const char* key, std::string_view expected, const json& v) const {
    fail("{}: {} field `{}` must be {}, found {}", file_, where_, key, expected, shown(v));
  }

  [[noreturn]] void wrong_element(const char* key, size_t index, std::string_view expected,
                                  const json& v) const {
    fail("{}: {} field `{}` element {} must be {}, found {}", file_, where_, key, index, expected,
         shown(v));
  }

  const json& object_;
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
  const std::string text = read_input_file(file, input_kinds::reference);
  require_json_nesting_within(text, file.string());
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e400
    fail("{}: not valid JSON ({})", file, printable(e.what()));
  }
  if (!root.is_object() || !root.contains("cases") || !root["cases"].is_array())
    fail("{}: expected an object with a `cases` array", file);
  if (root["cases"].empty())
    fail("{}: the `cases` array is empty: there is nothing to validate against", file);
  std::vector<OracleCase> cases;
  for (size_t i = 0; i < root["cases"].size(); ++i) {
    const json& j = root["cases"][i];
    if (!j.is_object()) fail("{}: case {} must be an object, found {}", file, i, j.type_name());
    CaseReader read(j, file, fmt::format("case {}", i));
    OracleCase c;
    c.name = read.text("name");
    read.rename(fmt::format("case {} ({})", i, c.name));
    c.prompt_ids = read.ids("prompt_ids");
    c.generated_ids = read.ids("generated_ids");
    c.full_ids = read.ids("full_ids");
    c.tf_pred = read.ids("tf_pred");
    c.margin = read.numbers("margin");
    c.logits = read.rows("logits");
    c.dense_equivalent = read.flag("dense_equivalent");
    c.sparse_rows_from = read.integer("sparse_rows_from");
    if (read.has("mtp_pred") || read.has("mtp_margin")) {
      c.mtp_pred = read.ids("mtp_pred");
      c.mtp_margin = read.numbers("mtp_margin");
    }
    if (read.has("indexer_topk")) c.indexer_topk = read.layer_rows("indexer_topk");
    if (read.has("experts")) c.experts = read.layer_rows("experts");
    check_case(c, read);
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace glmrt
