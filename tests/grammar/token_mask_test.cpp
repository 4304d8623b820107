// Token masks: the trie walk allows exactly the tokens whose bytes the
// automaton takes (checked against stepping each token alone), stop tokens
// only when the JSON is complete; and the sampler draws from the allowed
// tokens with their relative probabilities unchanged.
#include <glmrt/grammar/json_constraint.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/text/tokenizer.h>

#include "grammar_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace glmrt::grammar {
namespace {

using testing::schema_of;

// The mask by brute force: each token's bytes stepped on their own.
std::vector<uint8_t> reference_mask(const std::shared_ptr<const JsonSchema>& schema,
                                    const TokenTrie& trie, std::span<const int32_t> answer,
                                    std::span<const int32_t> stops) {
  JsonMachine m(schema);
  StateRef state = m.start();
  for (int32_t t : answer) state = m.step(state, *trie.bytes(t));
  std::vector<uint8_t> mask(trie.vocab_size(), 0);
  for (size_t id = 0; id < mask.size(); ++id) {
    const auto bytes = trie.bytes(static_cast<int32_t>(id));
    if (!bytes) continue;
    const size_t mark = m.mark();
    mask[id] = m.step(state, *bytes) != kRejected;
    m.release(mark);
  }
  if (m.accepting(state))
    for (int32_t s : stops) mask[s] = 1;
  return mask;
}

// Random answers drawn from the masks, each mask compared with the
// reference; returns how many answers finished.
int walk_and_compare(const std::shared_ptr<const JsonSchema>& schema,
                     const std::shared_ptr<const TokenTrie>& trie, std::vector<int32_t> stops,
                     int answers, int max_tokens, uint32_t seed) {
  std::mt19937 random(seed);
  int finished = 0;
  for (int a = 0; a < answers; ++a) {
    JsonConstraint constraint(schema, trie, stops);
    std::vector<int32_t> answer;
    for (int step = 0; step < max_tokens; ++step) {
      const auto mask = constraint.allowed(answer);
      const auto expected = reference_mask(schema, *trie, answer, stops);
      EXPECT_TRUE(std::equal(mask.begin(), mask.end(), expected.begin(), expected.end()))
          << "answer " << a << " step " << step;
      std::vector<int32_t> choices;
      for (size_t id = 0; id < mask.size(); ++id)
        if (mask[id]) choices.push_back(static_cast<int32_t>(id));
      EXPECT_FALSE(choices.empty()) << "dead end at step " << step;
      if (choices.empty()) return finished;
      const int32_t token = choices[random() % choices.size()];
      if (std::find(stops.begin(), stops.end(), token) != stops.end()) break;
      answer.push_back(token);
      if (constraint.complete(answer)) {
        std::string text;
        for (int32_t t : answer) text += *trie->bytes(t);
        Json value;
        EXPECT_NO_THROW(value = Json::parse(text)) << text;
        EXPECT_EQ(schema->problem(value), std::nullopt) << text;
        ++finished;
        break;
      }
      // Now and then, go back a few tokens, as rejected drafts do.
      if (random() % 5 == 0 && answer.size() > 2) {
        answer.resize(answer.size() - 2);
        (void)constraint.allowed(answer);
      }
    }
  }
  return finished;
}

std::shared_ptr<const TokenTrie> small_vocabulary() {
  std::vector<std::optional<std::string>> bytes = {
      std::nullopt,  // 0: a special token (the stop token below)
      "{",          "}",   "\"",   "\"a",  "a\"",      ":",           "1",   "12",   "{\"",
      " ",          "\n",  "\xC3", "\xA9", "\xC3\xA9", "\",",         "\"}", "0",    ".",
      "5",          "-",   "true", "null", ",",        "[",           "]",   "x",    "\\",
      "n",          "\":", "\": ", "name", "age",      "\"name\":\"", "}}",  "\"\"", ""};
  // Every printable byte alone too, as byte-level vocabularies have: any
  // text the grammar allows can then be spelled.
  for (char c = ' '; c <= '~'; ++c) bytes.push_back(std::string(1, c));
  return std::make_shared<const TokenTrie>(std::move(bytes));
}

TEST(TokenMask, MatchesEachTokenSteppedAlone) {
  const auto trie = small_vocabulary();
  const auto any = std::make_shared<const JsonSchema>(JsonSchema::any_object());
  walk_and_compare(any, trie, {0}, 40, 40, 1);
  const auto person = schema_of(R"({"type": "object", "properties": {
      "name": {"type": "string", "maxLength": 3}, "age": {"type": "integer", "maximum": 15}},
      "required": ["name", "age"]})");
  EXPECT_GT(walk_and_compare(person, trie, {0}, 60, 60, 2), 10);
}

TEST(TokenMask, StopTokensOnlyOnceComplete) {
  const auto trie = small_vocabulary();
  JsonConstraint c(schema_of(R"({"type": "integer", "maximum": 125})"), trie, {0});
  EXPECT_FALSE(c.allowed({})[0]);
  EXPECT_TRUE(c.allowed({})[7]);    // "1"
  EXPECT_TRUE(c.allowed({})[8]);    // "12"
  EXPECT_FALSE(c.allowed({})[1]);   // "{"
  EXPECT_FALSE(c.allowed({})[36]);  // "" spells nothing: never
  const std::vector<int32_t> twelve{8};
  EXPECT_TRUE(c.allowed(twelve)[0]);                        // 12 is complete
  EXPECT_TRUE(c.allowed(twelve)[19]);                       // "5": 125
  EXPECT_TRUE(c.allowed(twelve)[7]);                        // "1": 121
  EXPECT_FALSE(c.allowed(twelve)[8]);                       // "12": 1212 > 125
  EXPECT_TRUE(c.allowed(twelve)[17]);                       // "0": 120
  EXPECT_FALSE(c.allowed(std::vector<int32_t>{8, 7})[17]);  // 1210
  EXPECT_FALSE(c.complete(twelve));
  const std::vector<int32_t> full{8, 19};
  EXPECT_TRUE(c.complete(full));
  EXPECT_THROW(c.allowed(std::vector<int32_t>{1}), Error);  // "{" never came from the mask
}

TEST(TokenMask, RealTokenizer) {
  const auto tokenizer =
      text::Tokenizer::from_file(std::string(GLMRT_FIXTURES) + "/glm_tiny/tokenizer.json");
  const auto trie = std::make_shared<const TokenTrie>(TokenTrie::from_tokenizer(tokenizer, 1100));
  EXPECT_EQ(trie->vocab_size(), 1100u);
  EXPECT_FALSE(trie->bytes(1099));  // past the tokenizer: never allowed
  const auto schema = schema_of(R"({"type": "object", "properties": {
      "word": {"type": "string", "maxLength": 8},
      "n": {"type": "number", "minimum": 0, "maximum": 10},
      "list": {"type": "array", "items": {"type": "boolean"}, "maxItems": 2}},
      "required": ["word", "n", "list"]})");
  EXPECT_GT(walk_and_compare(schema, trie, {}, 8, 200, 3), 0);
}

TEST(TokenMask, SamplerKeepsRelativeProbabilitiesOfAllowedTokens) {
  const auto trie = small_vocabulary();
  const auto schema = schema_of(R"({"type": "integer", "maximum": 125})");
  std::vector<float> logits(trie->vocab_size());
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(static_cast<float>(i)) * 3;
  SamplingParams p;
  p.temperature = 0.7;
  Sampler plain(p);
  Sampler masked(p, std::make_shared<JsonConstraint>(schema, trie, std::vector<int32_t>{0}));
  const auto all = plain.distribution(logits, {}, {});
  const auto some = masked.distribution(logits, {}, {});
  JsonConstraint reference(schema, trie, {0});
  const auto mask = reference.allowed({});
  double allowed_mass = 0;
  for (const auto& d : all) allowed_mass += mask[d.token] ? d.probability : 0;
  size_t count = 0;
  for (const auto& d : all) {
    if (!mask[d.token]) continue;
    ++count;
    const auto it = std::find_if(some.begin(), some.end(),
                                 [&](const TokenProbability& e) { return e.token == d.token; });
    ASSERT_NE(it, some.end());
    EXPECT_NEAR(it->probability, d.probability / allowed_mass, 1e-12);
  }
  EXPECT_EQ(count, some.size());
  // Greedy picks the best allowed token; logit_bias banning them all is a clear error.
  p.temperature = 0;
  Sampler greedy(p, std::make_shared<JsonConstraint>(schema, trie, std::vector<int32_t>{0}));
  const int32_t best = greedy.sample(logits, {}, {});
  EXPECT_TRUE(mask[best]);
  for (size_t i = 0; i < logits.size(); ++i)
    if (mask[i]) {
      EXPECT_LE(logits[i], logits[best]);
    }
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) p.logit_bias.emplace_back(static_cast<int32_t>(i), -100.0);
  Sampler banned(p, std::make_shared<JsonConstraint>(schema, trie, std::vector<int32_t>{0}));
  EXPECT_THROW(banned.sample(logits, {}, {}), Error);
}

}  // namespace
}  // namespace glmrt::grammar
