// draft-ngram against a naive prompt lookup (rescanning the whole history for
// every proposal): the same drafts on random histories over small
// vocabularies, as the history grows a few tokens at a time and is rewound
// and changed — so the incremental index, its fallback to shorter n-grams and
// its undo log agree with the definition.
#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <gtest/gtest.h>

#include <random>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

/// n-gram lookup needs nothing of the model.
class NoModel final : public plugin::DraftHost {
 public:
  int32_t vocab_size() const noexcept override { return 1 << 20; }
  int32_t hidden_size() const noexcept override { return 1; }
  bool has_mtp() const noexcept override { return false; }
  glmrt_status last_hidden(float*) noexcept override { return GLMRT_ERR_UNSUPPORTED; }
  glmrt_status run_mtp(int32_t, int64_t, const float*, float*, float*) noexcept override {
    return GLMRT_ERR_UNSUPPORTED;
  }
  const char* last_error() const noexcept override { return "no model"; }
};

/// The definition: the most recent earlier occurrence of the last n tokens,
/// n from max_n down to min_n (0: the empty n-gram, proposing the last token),
/// continued by copying (its own drafts too, past the history's end).
std::vector<int32_t> naive_lookup(const std::vector<int32_t>& h, int min_n, int max_n,
                                  int max_tokens) {
  const int64_t n = static_cast<int64_t>(h.size());
  int64_t start = -1;
  for (int len = max_n; len >= std::max(min_n, 1) && start < 0; --len) {
    if (n < len + 1) continue;
    for (int64_t e = n - 2; e >= len - 1 && start < 0; --e)
      if (std::equal(h.end() - len, h.end(), h.begin() + (e - len + 1))) start = e + 1;
  }
  if (start < 0 && min_n == 0) start = n - 1;
  if (start < 0) return {};
  std::vector<int32_t> drafts;
  for (int j = 0; j < max_tokens; ++j) {
    const int64_t source = start + j;
    drafts.push_back(source < n ? h[source] : drafts[source - n]);
  }
  return drafts;
}

class DraftNgramTest : public ::testing::Test {
 protected:
  PluginHandle<plugin::Draft> create(std::map<std::string, std::string> settings) {
    return host_.create_draft({"draft-ngram", std::move(settings), {}}, services_);
  }
  std::vector<int32_t> propose(plugin::Draft& draft, const std::vector<int32_t>& history,
                               int max_tokens) {
    std::vector<int32_t> tokens(max_tokens), sizes(max_tokens, -1);
    glmrt_draft_request request{};
    request.struct_size = sizeof(request);
    request.max_tokens = max_tokens;
    request.history = history.data();
    request.n_history = static_cast<int64_t>(history.size());
    std::vector<double> uniforms(max_tokens, 0.5);
    request.uniforms = uniforms.data();
    glmrt_draft_proposal proposal{};
    proposal.struct_size = sizeof(proposal);
    proposal.max_tokens = max_tokens;
    proposal.tokens = tokens.data();
    proposal.q_size = sizes.data();
    EXPECT_EQ(draft.propose(model_, &request, &proposal), GLMRT_OK) << draft.last_error();
    tokens.resize(proposal.n_tokens);
    for (int i = 0; i < proposal.n_tokens; ++i) EXPECT_EQ(sizes[i], 0) << "q must be one-hot";
    return tokens;
  }

  PluginHost host_{std::vector<fs::path>{fs::path(GLMRT_BUILD_DIR) / "plugins"}};
  MemoryBudget budget_;
  HostServices services_{budget_, 1};
  NoModel model_;
};

TEST_F(DraftNgramTest, LongestNGramFirstThenShorter) {
  auto draft = create({{"min_n", "1"}, {"max_n", "3"}});
  EXPECT_EQ(draft->requirements(), 0u);
  // "7 8" last occurred before 20; "8" alone last before 30.
  EXPECT_EQ(propose(*draft, {7, 8, 20, 21, 5, 8, 30, 31, 7, 8}, 2), (std::vector<int32_t>{20, 21}));
  auto fresh = create({{"min_n", "1"}, {"max_n", "3"}});
  EXPECT_EQ(propose(*fresh, {9, 8, 30, 31, 6, 8}, 2), (std::vector<int32_t>{30, 31}));
  auto none = create({{"min_n", "1"}, {"max_n", "3"}});
  EXPECT_TRUE(propose(*none, {1, 2, 3, 4}, 3).empty());
}

TEST_F(DraftNgramTest, MinNZeroRepeatsTheLastTokenAndPeriodsAreCopiedWhole) {
  auto draft = create({{"min_n", "0"}, {"max_n", "2"}});
  EXPECT_EQ(propose(*draft, {1, 2, 3, 4}, 3), (std::vector<int32_t>{4, 4, 4}));
  auto periodic = create({{"min_n", "1"}, {"max_n", "2"}});
  EXPECT_EQ(propose(*periodic, {1, 2, 3, 1, 2, 3, 1, 2}, 5), (std::vector<int32_t>{3, 1, 2, 3, 1}));
}

TEST_F(DraftNgramTest, SettingsAreCheckedByName) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"min_n", "-1"}, {"max_n", "0"}, {"max_n", "17"}, {"min_n", "x"}, {"n", "2"}}) {
    try {
      create({{key, value}});
      ADD_FAILURE() << key << "=" << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("`" + key + "`"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(create({{"min_n", "4"}, {"max_n", "2"}}), Error);
}

TEST_F(DraftNgramTest, IncrementalIndexMatchesTheDefinitionThroughGrowthAndRewinds) {
  for (const auto& [min_n, max_n] :
       std::vector<std::pair<int, int>>{{0, 1}, {1, 3}, {2, 2}, {1, 6}, {0, 4}}) {
    auto draft = create({{"min_n", std::to_string(min_n)}, {"max_n", std::to_string(max_n)}});
    std::mt19937_64 rng(100 * min_n + max_n);
    std::vector<int32_t> history;
    int checked = 0, proposing = 0;
    for (int step = 0; step < 600; ++step) {
      const int vocab = step % 200 < 100 ? 3 : 6;
      if (step % 37 == 36 && history.size() > 2) {
        // A new prompt diverges somewhere: the drafter is told where.
        const int64_t keep = std::uniform_int_distribution<int64_t>(
            0, static_cast<int64_t>(history.size()) - 1)(rng);
        history.resize(keep);
        draft->rewind(keep);
      }
      const int grow = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < grow; ++i) history.push_back(static_cast<int32_t>(rng() % vocab));
      const int max_tokens = 1 + static_cast<int>(rng() % 4);
      const auto got = propose(*draft, history, max_tokens);
      ASSERT_EQ(got, naive_lookup(history, min_n, max_n, max_tokens))
          << "min_n " << min_n << " max_n " << max_n << " step " << step;
      ++checked;
      proposing += !got.empty();
    }
    EXPECT_EQ(checked, 600);
    EXPECT_GT(proposing, 400);
  }
}

TEST_F(DraftNgramTest, IndexMemoryComesFromTheHost) {
  auto draft = create({});
  std::vector<int32_t> history;
  for (int i = 0; i < 5000; ++i) history.push_back(i % 977);
  EXPECT_EQ(propose(*draft, history, 2).size(), 2u);
  EXPECT_GT(budget_.used(), 0u);
}

}  // namespace
}  // namespace glmrt
