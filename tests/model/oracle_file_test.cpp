// ref.json is read strictly: a field of the wrong type or an integer that does
// not fit is an error naming the file, the case and the field.
#include <glmrt/base/error.h>
#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

namespace glmrt {
namespace {

class OracleFile : public ::testing::Test {
 protected:
  ~OracleFile() override { std::filesystem::remove(file_); }

  // The error loading one case whose fields are `fields` (a JSON object body).
  std::string error_for(const std::string& fields) {
    std::ofstream(file_) << R"({"cases": [{"name": "c1", )" << fields << "}]}";
    try {
      load_oracle(file_);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }

  // A valid case of two positions, with `edit` replacing one field's value.
  std::string case_with(const std::string& key, const std::string& value) {
    const std::pair<std::string, std::string> fields[] = {
        {"prompt_ids", "[1]"},        {"generated_ids", "[2]"},  {"full_ids", "[1, 2]"},
        {"tf_pred", "[2, 0]"},        {"margin", "[0.5, 0.25]"}, {"logits", "[[0, 1], [1, 0]]"},
        {"dense_equivalent", "true"}, {"sparse_rows_from", "8"},
    };
    std::string body;
    for (const auto& [k, v] : fields)
      body += (body.empty() ? "" : ", ") + ("\"" + k + "\": ") + (k == key ? value : v);
    return body;
  }

  std::filesystem::path file_ = std::filesystem::temp_directory_path() /
                                ("glmrt-oracle-file-" + std::to_string(::getpid()) + ".json");
};

TEST_F(OracleFile, ValidCaseLoads) {
  EXPECT_EQ(error_for(case_with("", "")), "no error");
}

// Found by fuzz_oracle: an id beyond 2^63 parses as a float, and converting
// it to int32 was undefined behaviour (UBSan: outside the range of int).
TEST_F(OracleFile, IdBeyondAnyIntegerIsRefused) {
  const std::string error = error_for(case_with("prompt_ids", "[543, 9223372036854775808282]"));
  EXPECT_NE(error.find(file_.string()), std::string::npos) << error;
  EXPECT_NE(error.find("case 0 (c1) field `prompt_ids` element 1 must be a token id"),
            std::string::npos)
      << error;
}

TEST_F(OracleFile, FractionalNegativeOrHugeIdsAreRefused) {
  for (const char* ids : {"[1, 2.5]", "[1, -2]", "[1, 4294967298]"})
    EXPECT_NE(error_for(case_with("full_ids", ids)).find("field `full_ids` element 1"),
              std::string::npos)
        << ids;
}

TEST_F(OracleFile, MistypedScalarsNameTheField) {
  EXPECT_NE(error_for(case_with("sparse_rows_from", "1e30"))
                .find("`sparse_rows_from` must be an integer"),
            std::string::npos);
  EXPECT_NE(error_for(case_with("dense_equivalent", "1")).find("`dense_equivalent` must be true"),
            std::string::npos);
  EXPECT_NE(
      error_for(case_with("logits", "[[0, 1], 3]")).find("`logits` element 1 must be an array"),
      std::string::npos);
  EXPECT_NE(error_for(R"("name": 7)").find("case 0 field `name` must be a string"),
            std::string::npos);
}

}  // namespace
}  // namespace glmrt
