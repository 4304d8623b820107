// Fields the server knows but does not act on, and requests no answer can
// satisfy (a JSON format whose every first token logit_bias bans).
#include "request_parsing_fixture.h"

#include <glmrt/serve/job.h>
#include <glmrt/serve/json_output.h>

namespace glmrt::serve {
namespace {

// Fields accepted with no effect, each for a reason docs/serve.md gives;
// null is absent; parallel_tool_calls is read.
TEST_F(RequestParsing, DocumentedNoOpFieldsAreAccepted) {
  const ChatRequest r = parse_chat_request(
      parse_request_body(R"({"messages": [{"role": "user", "content": "hi"}], "model": "gpt-4o",
          "user": "u", "safety_identifier": "s", "metadata": {"k": "v"}, "store": false,
          "service_tier": "auto", "prompt_cache_key": "c", "modalities": ["text"],
          "functions": null, "anything": null, "parallel_tool_calls": false,
          "reasoning_effort": "low", "best_of": 1})"),
      context());
  EXPECT_FALSE(r.parallel_tool_calls);
  const ChatRequest defaults = parse_chat_request(
      parse_request_body(R"({"messages": [{"role": "user", "content": "hi"}]})"), context());
  EXPECT_TRUE(defaults.parallel_tool_calls);
  const ApiError unknown =
      chat_error(R"({"messages": [{"role": "user", "content": "hi"}], "cache_prompt": true})");
  EXPECT_NE(std::string(unknown.what())
                .find("`cache_prompt` is not a field of "
                      "/v1/chat/completions"),
            std::string::npos)
      << unknown.what();
  const ApiError seed =
      chat_error(R"({"messages": [{"role": "user", "content": "hi"}], "seed": -1})");
  EXPECT_NE(std::string(seed.what()).find("`seed` must be in [0, "), std::string::npos)
      << seed.what();
  const ApiError effort =
      chat_error(R"({"messages": [{"role": "user", "content": "hi"}], "reasoning_effort": {}})");
  EXPECT_NE(std::string(effort.what()).find("must be a string, found object"), std::string::npos)
      << effort.what();
}

// json_object with a logit_bias that bans `{`: no answer can satisfy the
// request, a 400 naming logit_bias (was a 500 from inside the sampler).
TEST_F(RequestParsing, ABiasThatBansEveryFirstTokenOfTheFormatIsRefused) {
  const SharedTokenTrie trie(tokenizer_, 1024);
  const auto generation = [&](const std::string& bias) {
    return parse_chat_request(
               parse_request_body(R"({"messages": [{"role": "user", "content": "hi"}],
                   "response_format": {"type": "json_object"}, "logit_bias": )" +
                                  bias + "}"),
               context())
        .generation;
  };
  // The only token of this vocabulary that starts with `{` (none may start with a space).
  ASSERT_EQ(tokenizer_.token_to_id("{"), text::TokenId{90});
  try {
    refuse_unsatisfiable_start(generation(R"({"90": -100})"), trie);
    ADD_FAILURE() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "logit_bias");
    EXPECT_NE(std::string(e.what()).find("cannot be satisfied"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(refuse_unsatisfiable_start(generation(R"({"90": -99})"), trie));
  EXPECT_NO_THROW(refuse_unsatisfiable_start(generation(R"({"91": -100})"), trie));
  // Met later in the answer (the sampler finds nothing left): a 400 too.
  Job job([](Job&) { throw UnsatisfiableConstraint("`logit_bias` bans every token ..."); });
  job.run();
  ASSERT_TRUE(job.error());
  EXPECT_EQ(job.error()->status(), 400);
  EXPECT_EQ(job.error()->param(), "logit_bias");
}

}  // namespace
}  // namespace glmrt::serve
