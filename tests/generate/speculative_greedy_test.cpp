// Greedy decoding with any drafter emits exactly transformers' tokens on
// every oracle case: the in-tree drafters (fixed and adaptive length), a
// drafter that knows the answer (everything accepted), one that gets every
// third draft wrong, and one drawing from a random q. Drafting leaves no
// trace in the caches (the next logits equal a plain session's), ends the
// answer exactly where decoding without drafts does, and tells the drafter
// what it accepted.
#include "engine_fixture.h"
#include "test_drafters.h"

#include <glmrt/generate/generator.h>
#include <glmrt/generate/speculator.h>
#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <tuple>

namespace glmrt {
namespace {

using test_support::kTinyModel;
using test_support::open_tiny_engine;
using test_support::reference_profile;
using test_support::ScriptedDrafter;

class SpeculativeGreedyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    plain_ = open_tiny_engine();
    cases_ = load_oracle(kTinyModel / "ref.json");
  }
  static void TearDownTestSuite() { plain_.reset(); }

  /// Generates every case greedily in `session_for(case)`; checks the tokens.
  static void expect_oracle_tokens(const std::function<Session&(const OracleCase&)>& session_for,
                                   const std::string& what) {
    for (const OracleCase& c : cases_) {
      Session& session = session_for(c);
      Sampler sampler(test_support::greedy_sampling());
      const int n = static_cast<int>(c.generated_ids.size());
      const Generation g = generate(session, sampler, c.prompt_ids, {n, {}});
      EXPECT_EQ(g.tokens, c.generated_ids) << what << ", case " << c.name;
      EXPECT_EQ(g.reason, StopReason::length);
      ASSERT_NE(session.speculator(), nullptr);
      // Prompt and answer but possibly the last token, as without drafting.
      std::vector<int32_t> whole = c.prompt_ids;
      whole.insert(whole.end(), c.generated_ids.begin(), c.generated_ids.end());
      const size_t held = session.tokens().size();
      EXPECT_TRUE(held == whole.size() || held + 1 == whole.size()) << held;
      EXPECT_TRUE(std::equal(session.tokens().begin(), session.tokens().end(), whole.begin()));
      expect_clean_caches(session, c);
    }
  }

  /// The cache holds no rejected rows: continuing gives a plain session's logits.
  static void expect_clean_caches(Session& session, const OracleCase& c) {
    std::vector<int32_t> next = c.full_ids;
    next.push_back(c.generated_ids.back());
    const std::vector<float> ours = session.set_context(next);
    Session plain(*plain_);
    const std::vector<float> want = plain.set_context(next);
    double worst = 0;
    for (size_t v = 0; v < want.size(); ++v)
      worst = std::max(worst, static_cast<double>(std::fabs(ours[v] - want[v])));
    EXPECT_LT(worst, 2e-4) << c.name;
    if (const MtpRows* rows = session.mtp_rows()) {
      const int64_t length = static_cast<int64_t>(session.tokens().size());
      EXPECT_TRUE(rows->next_row() == length - 1 || rows->next_row() == length)
          << rows->next_row() << " rows for " << length << " tokens";
    }
  }

  static inline std::unique_ptr<Engine> plain_;
  static inline std::vector<OracleCase> cases_;
};

TEST_F(SpeculativeGreedyTest, InTreeDraftersChangeNoToken) {
  // From a profile (reference-*.yaml's way) and from one engine with any
  // choice and policy (a benchmark's way).
  Profile ngram_profile = reference_profile();
  ngram_profile.draft = PluginChoice{"draft-ngram", {{"min_n", "0"}}, {}};
  ngram_profile.max_draft_tokens = 3;
  ngram_profile.draft_adaptive = false;
  auto ngram_engine = open_tiny_engine(ngram_profile);
  std::unique_ptr<Session> session;
  expect_oracle_tokens(
      [&](const OracleCase&) -> Session& {
        session = std::make_unique<Session>(*ngram_engine);
        return *session;
      },
      "draft-ngram from the profile");
  EXPECT_GT(session->speculator()->stats().proposed, 0);

  const std::vector<std::tuple<std::string, PluginChoice, DraftPolicy>> choices = {
      {"draft-ngram adaptive", {"draft-ngram", {{"min_n", "0"}}, {}}, {4, 1, true}},
      {"draft-mtp fixed 3", {"draft-mtp", {}, {}}, {3, 1, false}},
      {"draft-mtp adaptive", {"draft-mtp", {}, {}}, {4, 2, true}},
  };
  // An adaptive policy drafts where its cost model says drafting pays, and
  // that follows the step times measured: on a loaded machine one slow
  // drafter call can leave a whole case without a verified draft. So its
  // drafts are counted over every case (a case's second step drafts on the
  // priors alone once the experts are cached), the shadow drafts with them.
  for (const auto& [what, choice, policy] : choices) {
    int64_t judged = 0;
    const auto add_up = [&] {
      if (session)
        judged +=
            session->speculator()->stats().proposed + session->speculator()->stats().shadow_drafts;
    };
    session.reset();
    expect_oracle_tokens(
        [&](const OracleCase&) -> Session& {
          add_up();
          session = std::make_unique<Session>(*plain_, plain_->draft_setup(choice, policy));
          return *session;
        },
        what);
    add_up();
    EXPECT_GT(judged, 0) << what;
    if (!policy.adaptive) {
      EXPECT_GT(session->speculator()->stats().proposed, 0) << what;
    }
  }
}

TEST_F(SpeculativeGreedyTest, AcceptedDraftsAreTheModelsOwnTokens) {
  for (int wrong_every : {0, 3, 1}) {
    std::unique_ptr<ScriptedDrafter> drafter;
    std::unique_ptr<Session> session;
    int64_t accepted = 0, proposed = 0, forwards = 0, decided = 0;
    expect_oracle_tokens(
        [&](const OracleCase& c) -> Session& {
          if (session) {
            const DraftStats& s = session->speculator()->stats();
            accepted += s.accepted, proposed += s.proposed, forwards += s.forwards;
            decided += s.decided;
          }
          std::vector<int32_t> script = c.prompt_ids;
          script.insert(script.end(), c.generated_ids.begin(), c.generated_ids.end());
          drafter = std::make_unique<ScriptedDrafter>(std::move(script), wrong_every, 1024);
          session = std::make_unique<Session>(
              *plain_, borrowed_drafter(*drafter, {4, 1, false}, "scripted"));
          return *session;
        },
        "scripted, wrong every " + std::to_string(wrong_every));
    // Every verdict the host reported is a prefix of a proposal.
    for (const auto& [n_accepted, n_proposed] : drafter->verdicts) {
      EXPECT_LE(n_accepted, n_proposed);
      if (wrong_every == 0) {
        EXPECT_EQ(n_accepted, n_proposed);
      } else if (wrong_every == 1) {
        EXPECT_EQ(n_accepted, 0);
      }
    }
    if (wrong_every == 0) {
      EXPECT_GT(double(decided) / double(forwards), 3.0);
    } else if (wrong_every == 1) {
      EXPECT_EQ(accepted, 0);
    } else {
      EXPECT_GT(accepted, 0);
    }
    EXPECT_GT(proposed, 0);
  }
}

TEST_F(SpeculativeGreedyTest, AStochasticDrafterChangesNoToken) {
  test_support::RandomQDrafter drafter(1024);
  std::unique_ptr<Session> session;
  expect_oracle_tokens(
      [&](const OracleCase&) -> Session& {
        session = std::make_unique<Session>(*plain_,
                                            borrowed_drafter(drafter, {3, 1, false}, "random-q"));
        return *session;
      },
      "random q");
}

TEST_F(SpeculativeGreedyTest, AnswersEndWhereTheyEndWithoutDrafts) {
  const OracleCase& c = cases_.at(1);
  std::vector<int32_t> script = c.prompt_ids;
  script.insert(script.end(), c.generated_ids.begin(), c.generated_ids.end());
  const auto both = [&](const GenerationLimits& limits, const TokenCallback& callback,
                        const std::string& what) {
    ScriptedDrafter drafter(script, 0, 1024);
    Session drafted(*plain_, borrowed_drafter(drafter, {4, 1, false}, "scripted"));
    Session plain(*plain_, std::nullopt);
    Sampler a(test_support::greedy_sampling()), b(test_support::greedy_sampling());
    const Generation with = generate(drafted, a, c.prompt_ids, limits, callback);
    const Generation without = generate(plain, b, c.prompt_ids, limits, callback);
    EXPECT_EQ(with.tokens, without.tokens) << what;
    EXPECT_EQ(with.reason, without.reason) << what;
    EXPECT_EQ(with.stop_token, without.stop_token) << what;
    EXPECT_LE(drafted.tokens().size(), c.prompt_ids.size() + with.tokens.size()) << what;
    EXPECT_TRUE(std::equal(drafted.tokens().begin(), drafted.tokens().end(), script.begin()));
  };
  const std::vector<int32_t> stop = {c.generated_ids[5]};
  both({100, stop}, {}, "a stop token inside accepted drafts");
  both({7, {}}, {}, "the token limit inside accepted drafts");
  int seen = 0;
  both(
      {100, {}}, [&](int32_t) { return ++seen % 4 != 0; }, "cancelled by the callback");
  Profile small = reference_profile();
  small.max_context = static_cast<int>(c.prompt_ids.size()) + 6;
  auto engine = open_tiny_engine(small);
  ScriptedDrafter drafter(script, 0, 1024);
  Session drafted(*engine, borrowed_drafter(drafter, {4, 1, false}, "scripted"));
  Sampler sampler(test_support::greedy_sampling());
  const Generation g = generate(drafted, sampler, c.prompt_ids, {100, {}});
  EXPECT_EQ(g.reason, StopReason::context_full);
  EXPECT_EQ(g.tokens, std::vector<int32_t>(c.generated_ids.begin(), c.generated_ids.begin() + 7));
}

TEST_F(SpeculativeGreedyTest, ANewPromptRewindsTheDrafterWhereItDiverges) {
  const OracleCase& c = cases_.at(2);
  ScriptedDrafter drafter(c.full_ids, 0, 1024);
  Session session(*plain_, borrowed_drafter(drafter, {2, 1, false}, "scripted"));
  Sampler sampler(test_support::greedy_sampling());
  generate(session, sampler, c.prompt_ids, {6, {}});
  std::vector<int32_t> other(c.prompt_ids.begin(), c.prompt_ids.begin() + 10);
  other.push_back(3);
  generate(session, sampler, other, {3, {}});
  ASSERT_FALSE(drafter.rewinds.empty());
  EXPECT_EQ(drafter.rewinds.back(), 10);
}

}  // namespace
}  // namespace glmrt
