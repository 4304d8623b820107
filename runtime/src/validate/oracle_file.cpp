#include <glmrt/base/error.h>
#include <glmrt/validate/oracle.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <limits>

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

}  // namespace

std::vector<OracleCase> load_oracle(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) fail("cannot open reference file {}", file);
  json root;
  try {
    root = json::parse(in);
  } catch (const json::exception& e) {
    fail("{}: not valid JSON ({})", file, e.what());
  }
  if (!root.is_object() || !root.contains("cases") || !root["cases"].is_array())
    fail("{}: expected an object with a `cases` array", file);
  std::vector<OracleCase> cases;
  for (size_t i = 0; i < root["cases"].size(); ++i) {
    const json& j = root["cases"][i];
    if (!j.is_object()) fail("{}: case {} must be an object, found {}", file, i, j.type_name());
    CaseReader read(j, file, fmt::format("case {}", i));
    OracleCase c;
    c.name = read.text("name");
    read.rename(fmt::format("case {}", c.name));
    c.prompt_ids = read.ids("prompt_ids");
    c.generated_ids = read.ids("generated_ids");
    c.full_ids = read.ids("full_ids");
    c.tf_pred = read.ids("tf_pred");
    c.margin = read.numbers("margin");
    c.logits = read.rows("logits");
    c.dense_equivalent = read.flag("dense_equivalent");
    c.sparse_rows_from = read.integer("sparse_rows_from");
    if (j.contains("mtp_pred")) {
      c.mtp_pred = read.ids("mtp_pred");
      c.mtp_margin = read.numbers("mtp_margin");
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
