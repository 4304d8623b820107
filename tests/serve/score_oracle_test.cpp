// Log-likelihoods against the oracle: the log-softmax of transformers'
// float64 logits (ref.json) is what SequenceScorer, `glmrt score` and
// /v1/completions with echo + logprobs must all report, to 1e-3 per token,
// and the three must agree with each other.
#include "../generate/engine_fixture.h"
#include "server_process.h"

#include <glmrt/score/perplexity.h>
#include <glmrt/score/sequence_scorer.h>
#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include "shell_command.h"

#include <sys/wait.h>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "checkpoint_generator.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test_support::kTinyModel;

constexpr double kTolerance = 1e-3;

const std::vector<OracleCase>& cases() {
  static const std::vector<OracleCase> loaded = load_oracle(kTinyModel / "ref.json");
  return loaded;
}

// log P(full_ids[t] | full_ids[..t]) from the reference logits, t >= 1.
double reference_logprob(const OracleCase& c, size_t t) {
  const std::vector<double>& row = c.logits[t - 1];
  const double max = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (double l : row) sum += std::exp(l - max);
  return row[static_cast<size_t>(c.full_ids[t])] - max - std::log(sum);
}

int32_t reference_argmax(const OracleCase& c, size_t t) {
  const std::vector<double>& row = c.logits[t - 1];
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

// The reference log-likelihood of a case's generated continuation.
double reference_continuation(const OracleCase& c) {
  double sum = 0;
  for (size_t t = c.prompt_ids.size(); t < c.full_ids.size(); ++t) sum += reference_logprob(c, t);
  return sum;
}

fs::path reference_profile_path() {
  return fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml";
}

// configs/reference.yaml with `memory.prefill_chunk: chunk`, written to `dir`.
fs::path chunked_profile(const fs::path& dir, int chunk) {
  std::ifstream in(reference_profile_path());
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const size_t memory = yaml.find("\nmemory:\n");
  if (memory == std::string::npos) throw std::runtime_error("reference.yaml has no memory section");
  yaml.insert(memory + 9, fmt::format("  prefill_chunk: {}\n", chunk));
  const fs::path file = dir / "chunked.yaml";
  std::ofstream(file) << yaml;
  return file;
}

std::string score_command(const fs::path& requests, const std::string& flags = "",
                          const fs::path& profile = reference_profile_path()) {
  return fmt::format("{}/glmrt score --profile {} --model {} --requests {} {} 2>/dev/null",
                     GLMRT_BUILD_DIR, profile.string(), kTinyModel.string(), requests.string(),
                     flags);
}

TEST(ScoreOracle, ScorerMatchesTheReferenceTokenByToken) {
  auto engine = test_support::open_tiny_engine();
  Session session(*engine);
  SequenceScorer scorer(session);
  for (const OracleCase& c : cases()) {
    const auto scored = scorer.score(c.full_ids, 3);
    ASSERT_EQ(scored.scores.size(), c.full_ids.size() - 1) << c.name;
    for (size_t t = 1; t < c.full_ids.size(); ++t) {
      const TokenScore& s = scored.scores[t - 1];
      EXPECT_EQ(s.token, c.full_ids[t]);
      EXPECT_NEAR(s.logprob, reference_logprob(c, t), kTolerance) << c.name << " token " << t;
      ASSERT_EQ(s.top.size(), 3u);
      if (c.margin[t - 1] > 1e-3) {  // a clear reference argmax
        EXPECT_EQ(s.top[0].token, reference_argmax(c, t)) << c.name << " token " << t;
        EXPECT_EQ(s.greedy, c.full_ids[t] == reference_argmax(c, t)) << c.name << " token " << t;
      }
    }
  }
}

TEST(ScoreOracle, ReusedPrefixesAndChunkedPrefillGiveTheSameScores) {
  const OracleCase& a = cases()[3];  // the longest prompt
  const OracleCase& b = cases()[2];
  auto engine = test_support::open_tiny_engine();
  Session session(*engine);
  SequenceScorer scorer(session);
  scorer.score(a.full_ids, 2);
  // Another continuation of a's prompt: the prompt's KV and scores are reused.
  std::vector<int32_t> other(a.prompt_ids);
  other.insert(other.end(), b.generated_ids.begin(), b.generated_ids.end());
  const auto reused = scorer.score(other, 2);
  // The prompt's last row is run again: the first continuation token differs,
  // so its score is not the one remembered.
  ASSERT_NE(a.generated_ids[0], b.generated_ids[0]);
  EXPECT_EQ(reused.reused, static_cast<int64_t>(a.prompt_ids.size()) - 1);
  // A prefix of what was scored is answered from memory.
  const std::vector<int32_t> prefix(other.begin(), other.begin() + 6);
  EXPECT_EQ(scorer.score(prefix, 2).reused, 5);

  Profile chunked = test_support::reference_profile();
  chunked.prefill_chunk = 3;
  auto chunked_engine = test_support::open_tiny_engine(chunked);
  Session fresh_session(*chunked_engine);
  SequenceScorer fresh(fresh_session);
  const auto expected = fresh.score(other, 2);
  ASSERT_EQ(reused.scores.size(), expected.scores.size());
  for (size_t i = 0; i < expected.scores.size(); ++i) {
    EXPECT_NEAR(reused.scores[i].logprob, expected.scores[i].logprob, 1e-4) << i;
    EXPECT_EQ(reused.scores[i].top[0].token, expected.scores[i].top[0].token) << i;
  }
  for (size_t i = 0; i < reused.next_logits.size(); ++i)
    ASSERT_NEAR(reused.next_logits[i], expected.next_logits[i], 1e-4);
}

TEST(ScoreOracle, PerplexityCountsEveryTokenOnce) {
  const OracleCase& c = cases()[3];  // the longest
  auto engine = test_support::open_tiny_engine();
  Session session(*engine);
  SequenceScorer scorer(session);
  double reference = 0;
  for (size_t t = 1; t < c.full_ids.size(); ++t) reference -= reference_logprob(c, t);
  const int64_t T = static_cast<int64_t>(c.full_ids.size());
  const PerplexityResult whole = perplexity(scorer, c.full_ids, T, T);
  EXPECT_EQ(whole.tokens, T - 1);
  EXPECT_EQ(whole.windows, 1);
  EXPECT_NEAR(whole.negative_log_likelihood, reference, kTolerance);
  const PerplexityResult windows = perplexity(scorer, c.full_ids, 16, 8);
  EXPECT_EQ(windows.tokens, T - 1);
  EXPECT_EQ(windows.windows, (T - 16 + 7) / 8 + 1);
  // Shorter contexts predict worse on average, but not absurdly so.
  EXPECT_GT(windows.perplexity(), 1.0);
  EXPECT_THROW(perplexity(scorer, std::vector<int32_t>{1}, 4, 2), Error);
  EXPECT_THROW(perplexity(scorer, c.full_ids, 4, 5), Error);
}

struct ScoreLine {
  double logprob = 0;
  int64_t tokens = 0;
  int greedy = -1;
};

std::vector<ScoreLine> parse_score_output(const std::string& out) {
  std::vector<ScoreLine> lines;
  std::istringstream in(out);
  ScoreLine l;
  while (in >> l.logprob >> l.tokens >> l.greedy) lines.push_back(l);
  return lines;
}

// The seed's line format for every case, and JSON Lines for the first.
fs::path write_requests(const fs::path& dir) {
  const fs::path file = dir / "requests.txt";
  std::ofstream out(file);
  for (const OracleCase& c : cases()) {
    out << c.prompt_ids.size() << ' ' << c.generated_ids.size();
    for (int32_t id : c.full_ids) out << ' ' << id;
    out << '\n';
  }
  const OracleCase& c = cases().front();
  out << nlohmann::json{{"context", c.prompt_ids}, {"continuation", c.generated_ids}}.dump()
      << '\n';
  return file;
}

std::vector<ScoreLine> score_with_the_command(const fs::path& profile = reference_profile_path()) {
  test::ScratchDir dir("glmrt-score");
  const auto [status, out] =
      test::run_shell(score_command(write_requests(dir.path()), "", profile));
  EXPECT_EQ(status, 0) << out;
  return parse_score_output(out);
}

TEST(ScoreOracle, ScoreCommandMatchesTheReference) {
  const auto lines = score_with_the_command();
  ASSERT_EQ(lines.size(), cases().size() + 1);
  for (size_t i = 0; i <= cases().size(); ++i) {
    const OracleCase& c = cases()[i % cases().size()];
    EXPECT_NEAR(lines[i].logprob, reference_continuation(c), kTolerance) << c.name;
    EXPECT_EQ(lines[i].tokens, static_cast<int64_t>(c.generated_ids.size()));
    EXPECT_EQ(lines[i].greedy, 1) << c.name;  // the reference's own greedy continuation
  }
  test::ScratchDir dir("glmrt-score-json");
  const auto [status, out] = test::run_shell(score_command(write_requests(dir.path()), "--json"));
  ASSERT_EQ(status, 0);
  std::istringstream in(out);
  std::string line;
  size_t n = 0;
  for (; std::getline(in, line); ++n) {
    const auto j = nlohmann::json::parse(line);  // one JSON value per line
    EXPECT_NEAR(j.at("logprob").get<double>(), lines[n].logprob, 1e-6);
    EXPECT_EQ(j.at("tokens"), lines[n].tokens);
    EXPECT_EQ(j.at("greedy"), true);
  }
  EXPECT_EQ(n, lines.size());
}

TEST(ScoreOracle, ScoreCommandRefusesBadInputBeforeLoadingTheModel) {
  test::ScratchDir dir("glmrt-score-bad");
  const fs::path file = dir.path() / "bad.txt";
  std::ofstream(file) << "2 1 5 6 7\n3 1 5 6\n";
  const auto [status, out] = test::run_shell(score_command(file) + " 2>&1");
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("bad.txt:2: 2 token ids, but ctx_len + cont_len = 4"), std::string::npos)
      << out;
}

nlohmann::json post(httplib::Client& client, const std::string& path, const nlohmann::json& body) {
  const auto response = client.Post(path, body.dump(), "application/json");
  if (!response) throw std::runtime_error("no response from " + path);
  if (response->status != 200)
    throw std::runtime_error(
        fmt::format("{}: HTTP {}: {}", path, response->status, response->body));
  return nlohmann::json::parse(response->body);
}

// /v1/completions of a server running `profile` against the reference and
// `glmrt score` with that same profile.
void check_echo_logprobs(const fs::path& profile) {
  const auto command_lines = score_with_the_command(profile);
  ASSERT_EQ(command_lines.size(), cases().size() + 1);
  test::ServerProcess server({"--profile", profile.string(), "--model", kTinyModel.string()});
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(120);

  nlohmann::json prompts = nlohmann::json::array();
  for (const OracleCase& c : cases()) prompts.push_back(c.full_ids);
  // Scoring only (max_tokens 0), one batched request.
  const auto scored = post(
      client, "/v1/completions",
      {{"model", "any"}, {"prompt", prompts}, {"echo", true}, {"logprobs", 1}, {"max_tokens", 0}});
  ASSERT_EQ(scored["choices"].size(), cases().size());
  for (size_t i = 0; i < cases().size(); ++i) {
    const OracleCase& c = cases()[i];
    const auto& choice = scored["choices"][i];
    EXPECT_EQ(choice["index"], i);
    EXPECT_EQ(choice["finish_reason"], "length");
    const auto& lp = choice["logprobs"];
    ASSERT_EQ(lp["tokens"].size(), c.full_ids.size());
    EXPECT_TRUE(lp["token_logprobs"][0].is_null());
    EXPECT_TRUE(lp["top_logprobs"][0].is_null());
    EXPECT_EQ(lp["text_offset"][0], 0);
    double continuation = 0;
    for (size_t t = 1; t < c.full_ids.size(); ++t) {
      const double value = lp["token_logprobs"][t].get<double>();
      EXPECT_NEAR(value, reference_logprob(c, t), kTolerance) << c.name << " token " << t;
      EXPECT_GE(lp["text_offset"][t].get<int64_t>(), lp["text_offset"][t - 1].get<int64_t>());
      if (t >= c.prompt_ids.size()) continuation += value;
    }
    EXPECT_NEAR(continuation, command_lines[i].logprob, 1e-4) << c.name;
  }

  // What lm-evaluation-harness's local-completions sends: one prompt per
  // request here, max_tokens 1; it sums token_logprobs[ctxlen:-1] and calls
  // the continuation greedy when each token's logprob is its top_logprobs' max.
  for (size_t i = 0; i < cases().size(); ++i) {
    const OracleCase& c = cases()[i];
    const auto body = post(client, "/v1/completions",
                           {{"model", "gpt-whatever"},
                            {"prompt", nlohmann::json::array({c.full_ids})},
                            {"echo", true},
                            {"logprobs", 1},
                            {"max_tokens", 1},
                            {"temperature", 0},
                            {"seed", 1234}});
    const auto& lp = body["choices"][0]["logprobs"];
    ASSERT_EQ(lp["token_logprobs"].size(), c.full_ids.size() + 1);
    double sum = 0;
    bool greedy = true;
    for (size_t t = c.prompt_ids.size(); t < c.full_ids.size(); ++t) {
      const double value = lp["token_logprobs"][t].get<double>();
      sum += value;
      double best = -INFINITY;
      for (const auto& [text, top] : lp["top_logprobs"][t].items())
        best = std::max(best, top.get<double>());
      greedy = greedy && value == best;
    }
    EXPECT_NEAR(sum, command_lines[i].logprob, 1e-4) << c.name;
    EXPECT_TRUE(greedy) << c.name;
  }
  EXPECT_EQ(server.stop(), 0);
}

TEST(ScoreOracle, EchoLogprobsMatchTheReferenceAndTheScoreCommand) {
  check_echo_logprobs(reference_profile_path());
}

// memory.prefill_chunk reaches serve and score: prompts prefilled 3 positions
// per forward call (DSA rows included) score as the whole prompt does.
TEST(ScoreOracle, ChunkedPrefillProfileGivesTheSameNumbersInServeAndScore) {
  test::ScratchDir dir("glmrt-score-chunked");
  const fs::path profile = chunked_profile(dir.path(), 3);
  const auto whole = score_with_the_command();
  const auto chunked = score_with_the_command(profile);
  ASSERT_EQ(chunked.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_NEAR(chunked[i].logprob, whole[i].logprob, 1e-4) << i;
    EXPECT_EQ(chunked[i].tokens, whole[i].tokens);
    EXPECT_EQ(chunked[i].greedy, whole[i].greedy);
  }
  check_echo_logprobs(profile);
}

}  // namespace
}  // namespace glmrt
