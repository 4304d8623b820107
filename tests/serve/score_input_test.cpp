// Scoring inputs and the arithmetic under every log-probability the server
// and `glmrt score` report: request lines in both formats (and their errors),
// and log-softmax, greedy flags and top alternatives on hand-made logits.
#include <glmrt/base/error.h>
#include <glmrt/score/score_request.h>
#include <glmrt/score/token_score.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

namespace glmrt {
namespace {

const auto kTokenizer = [] {
  return text::Tokenizer::from_file(std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny" /
                                    "tokenizer.json");
};

std::string error_of(const std::string& line) {
  const auto tokenizer = kTokenizer();
  try {
    parse_score_request(line, tokenizer, 1024, "requests.txt:7");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ScoreRequest, SeedLineFormat) {
  const auto tokenizer = kTokenizer();
  const ScoreRequest r = parse_score_request("2 3 10 11 12 13 14", tokenizer, 1024, "x");
  EXPECT_EQ(r.context_length, 2);
  EXPECT_EQ(r.tokens, (std::vector<int32_t>{10, 11, 12, 13, 14}));
}

TEST(ScoreRequest, JsonLinesWithIdsAndText) {
  const auto tokenizer = kTokenizer();
  const ScoreRequest ids =
      parse_score_request(R"({"context": [1, 2], "continuation": [3]})", tokenizer, 1024, "x");
  EXPECT_EQ(ids.context_length, 2);
  EXPECT_EQ(ids.tokens, (std::vector<int32_t>{1, 2, 3}));

  // Text: the context's trailing space moves to the continuation, and the
  // sequence is the encoding of the whole text (lm-evaluation-harness).
  const ScoreRequest words = parse_score_request(
      R"({"context": "The capital is ", "continuation": "Paris"})", tokenizer, 1024, "x");
  const auto whole = tokenizer.encode("The capital is Paris", false);
  EXPECT_EQ(words.tokens, std::vector<int32_t>(whole.begin(), whole.end()));
  EXPECT_EQ(words.context_length,
            static_cast<int64_t>(tokenizer.encode("The capital is", false).size()));

  const ScoreRequest mixed =
      parse_score_request(R"({"context": [5, 6], "continuation": " Paris"})", tokenizer, 1024, "x");
  EXPECT_EQ(mixed.context_length, 2);
  EXPECT_EQ(mixed.tokens.size(), 2 + tokenizer.encode(" Paris", false).size());
}

TEST(ScoreRequest, ErrorsNameTheLineAndTheProblem) {
  EXPECT_NE(
      error_of("2 3 10 11 12").find("requests.txt:7: 3 token ids, but ctx_len + cont_len = 5"),
      std::string::npos);
  EXPECT_NE(error_of("0 1 5").find("ctx_len is 0"), std::string::npos);
  EXPECT_NE(error_of("1 0 5").find("cont_len is 0"), std::string::npos);
  EXPECT_NE(error_of("1 1 5 x").find("`x` is not an integer"), std::string::npos);
  EXPECT_NE(error_of("1 1 5 1024").find("outside the vocabulary"), std::string::npos);
  EXPECT_NE(error_of("hello").find("not an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"context": [1]})").find("missing `continuation`"), std::string::npos);
  EXPECT_NE(error_of(R"({"context": [1], "continuation": [2000]})").find("continuation[0]"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"context": "", "continuation": "a"})").find("context encodes to no tokens"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"context": [1], "continuation": 5})").find("`continuation` is number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"context": [1], )").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("{\"context\": " + std::string(100, '[')).find("nested deeper"),
            std::string::npos);
}

TEST(ScoreRequest, FilesSkipBlankLinesAndComments) {
  const auto tokenizer = kTokenizer();
  const std::string in("# a comment\n1 1 5 6\n\n{\"context\": [1], \"continuation\": [2, 3]}\n");
  const auto requests = read_score_requests(in, "f", tokenizer, 1024);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].tokens, (std::vector<int32_t>{1, 2, 3}));
  const std::string bad("1 1 5 6\n\n1 1 5\n");
  try {
    read_score_requests(bad, "f", tokenizer, 1024);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f:3:"), std::string::npos) << e.what();
  }
}

TEST(TokenScore, LogSoftmaxGreedyAndTopAlternatives) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f};
  double z = 0;
  for (float l : logits) z += std::exp(static_cast<double>(l));
  const TokenScore s = score_logits(logits, 2, 3);
  EXPECT_NEAR(s.logprob, 2.0 - std::log(z), 1e-12);
  EXPECT_FALSE(s.greedy);
  ASSERT_EQ(s.top.size(), 3u);
  EXPECT_EQ(s.top[0].token, 1);  // ties: the lower id first
  EXPECT_EQ(s.top[1].token, 3);
  EXPECT_EQ(s.top[2].token, 2);
  EXPECT_NEAR(s.top[2].logprob, s.logprob, 1e-12);
  EXPECT_TRUE(score_logits(logits, 3, 0).greedy);  // a tie with the best is greedy
  EXPECT_TRUE(score_logits(logits, 3, 0).top.empty());
  EXPECT_THROW(score_logits(logits, 4, 0), Error);
  const std::vector<float> bad = {NAN, NAN};
  EXPECT_THROW(score_logits(bad, 0, 0), Error);
}

TEST(TokenScore, ContinuationSumsFromTheContextOn) {
  std::vector<TokenScore> scores(4);
  for (int i = 0; i < 4; ++i) {
    scores[i].logprob = -(i + 1);
    scores[i].greedy = i != 1;
  }
  const ContinuationScore c = score_continuation(scores, 3);  // tokens 3 and 4
  EXPECT_EQ(c.tokens, 2);
  EXPECT_DOUBLE_EQ(c.logprob, -7);
  EXPECT_TRUE(c.greedy);
  EXPECT_FALSE(score_continuation(scores, 1).greedy);
  EXPECT_THROW(score_continuation(scores, 0), Error);
  EXPECT_THROW(score_continuation(scores, 6), Error);
}

}  // namespace
}  // namespace glmrt
