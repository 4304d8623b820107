// Every row of tests/fixtures/tokenizer/*/expected.jsonl (made by the Hugging
// Face `tokenizers` library) must be reproduced exactly.
#include <glmrt/text/tokenizer.h>
#include <gtest/gtest.h>

#include "fixture_rows.h"

namespace glmrt::text {
namespace {

using testing::read_json_lines;
using testing::tokenizer_fixture;

class TokenizerExactness : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerExactness, EveryFixtureRowMatches) {
  const Tokenizer tokenizer =
      Tokenizer::from_file(tokenizer_fixture(GetParam() + "/tokenizer.json"));
  const auto rows = read_json_lines(tokenizer_fixture(GetParam() + "/expected.jsonl"));
  ASSERT_EQ(rows.size(), 506u);
  int passed = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const std::string text = row["text"];
    const auto expected_ids = row["ids"].get<std::vector<TokenId>>();
    const Encoding encoding = tokenizer.encode_with_tokens(text);
    const auto ids_special = tokenizer.encode(text, true);
    const std::string decoded = tokenizer.decode(expected_ids);
    const std::string decoded_skip = tokenizer.decode(expected_ids, true);
    const bool ok = encoding.ids == expected_ids &&
                    ids_special == row["ids_special"].get<std::vector<TokenId>>() &&
                    encoding.tokens == row["tokens"].get<std::vector<std::string>>() &&
                    decoded == row["decoded"].get<std::string>() &&
                    decoded_skip == row["decoded_skip"].get<std::string>();
    EXPECT_TRUE(ok) << GetParam() << " row " << i << " text " << row["text"].dump()
                    << "\n  ids      " << nlohmann::json(encoding.ids).dump() << "\n  expected "
                    << row["ids"].dump() << "\n  tokens   "
                    << nlohmann::json(encoding.tokens).dump() << "\n  expected "
                    << row["tokens"].dump() << "\n  decoded  " << nlohmann::json(decoded).dump()
                    << " / " << nlohmann::json(decoded_skip).dump() << "\n  expected "
                    << row["decoded"].dump() << " / " << row["decoded_skip"].dump();
    passed += ok;
  }
  std::printf("[ %s ] %d / %zu rows match\n", GetParam().c_str(), passed, rows.size());
}

TEST_P(TokenizerExactness, EncodingIsStableWithWarmCache) {
  const Tokenizer tokenizer =
      Tokenizer::from_file(tokenizer_fixture(GetParam() + "/tokenizer.json"));
  const auto rows = read_json_lines(tokenizer_fixture(GetParam() + "/expected.jsonl"));
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& row : rows)
      ASSERT_EQ(tokenizer.encode(row["text"].get<std::string>()),
                row["ids"].get<std::vector<TokenId>>());
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TokenizerExactness,
                         ::testing::Values("deepseek_v3", "qwen3", "glm_tiny"));

}  // namespace
}  // namespace glmrt::text
