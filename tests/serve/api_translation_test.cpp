// /v1/messages (Anthropic) and /v1/responses (OpenAI Responses) read into
// the chat request they ask for: system text, content blocks, tool use and
// results, tool_choice, stop sequences, thinking and reasoning, text.format;
// and the fields these endpoints do not implement refused with 400 naming them.
#include "request_parsing_fixture.h"

#include <glmrt/serve/messages_request.h>
#include <glmrt/serve/messages_response.h>
#include <glmrt/serve/responses_request.h>

namespace glmrt::serve {
namespace {

Json messages_body(const std::string& body) {
  return chat_body_of_messages(parse_request_body(body));
}
Json responses_body(const std::string& body) {
  return chat_body_of_responses(parse_request_body(body));
}

// The 400 `translate` throws for `body`, checked to name `field` and hold `words`.
template <typename Translate>
void expect_refusal(Translate translate, const std::string& body, const std::string& field,
                    const std::string& words) {
  try {
    translate(body);
    ADD_FAILURE() << "accepted: " << body;
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400) << e.what();
    EXPECT_EQ(e.param(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST_F(RequestParsing, AnthropicMessagesBecomeTheChatRequestTheyAsk) {
  const Json chat = messages_body(R"({"model": "claude", "max_tokens": 20,
      "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
      "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [
          {"type": "thinking", "thinking": "Use the tool.", "signature": "x"},
          {"type": "text", "text": "Looking."},
          {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [
          {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]},
          {"type": "text", "text": "And tomorrow?"}]}],
      "tools": [{"name": "weather", "description": "d", "input_schema": {"type": "object"}}],
      "tool_choice": {"type": "tool", "name": "weather", "disable_parallel_tool_use": true},
      "stop_sequences": ["END"], "temperature": 0.5, "top_k": 5, "stream": true,
      "metadata": {"user_id": "u"}, "thinking": {"type": "disabled"}})");
  const Json& m = chat["messages"];
  ASSERT_EQ(m.size(), 5u) << chat.dump();
  EXPECT_EQ(m[0], Json({{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(m[2]["reasoning_content"], "Use the tool.");
  EXPECT_EQ(m[2]["content"], "Looking.");
  EXPECT_EQ(m[2]["tool_calls"][0]["id"], "toolu_1");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(m[3], Json({{"role", "tool"}, {"tool_call_id", "toolu_1"}, {"content", "sunny"}}));
  EXPECT_EQ(m[4], Json({{"role", "user"}, {"content", "And tomorrow?"}}));
  EXPECT_EQ(chat["tools"][0]["function"]["parameters"], Json({{"type", "object"}}));
  EXPECT_EQ(chat["tool_choice"]["function"]["name"], "weather");
  EXPECT_EQ(chat["parallel_tool_calls"], false);
  EXPECT_EQ(chat["stop"], Json::array({"END"}));
  EXPECT_EQ(chat["thinking"]["type"], "disabled");
  // The chat path reads it: a forced call to the named tool, stop string, thinking off.
  RequestContext roomy = context();  // room for the tools' definitions
  roomy.max_context = 4096;
  const ChatRequest r = parse_messages_request(parse_request_body(R"({"max_tokens": 8,
      "messages": [{"role": "user", "content": "hi"}], "stop_sequences": ["END"],
      "tools": [{"name": "a", "input_schema": {"type": "object"}},
                {"name": "b", "input_schema": {"type": "object"}}],
      "tool_choice": {"type": "tool", "name": "b"}, "thinking": {"type": "disabled"}})"),
                                               roomy);
  EXPECT_TRUE(r.forced_call);
  EXPECT_EQ(r.forced_function, "b");
  EXPECT_FALSE(r.thinking);
  EXPECT_EQ(r.generation.sampling.max_new_tokens, 8);
  EXPECT_EQ(r.generation.stop, std::vector<std::string>{"END"});
  // Newer Anthropic fields: adaptive thinking, output_config's effort and JSON format.
  const Json adaptive = messages_body(R"({"max_tokens": 1, "messages": [{"role": "user",
      "content": "x"}], "thinking": {"type": "adaptive", "display": "summarized"},
      "cache_control": {"type": "ephemeral"}, "output_config": {"effort": "low",
      "format": {"type": "json_schema", "schema": {"type": "object"}}}})");
  EXPECT_EQ(adaptive["thinking"]["type"], "enabled");
  EXPECT_EQ(adaptive["reasoning_effort"], "low");
  EXPECT_EQ(adaptive["response_format"]["json_schema"]["schema"], Json({{"type", "object"}}));
  EXPECT_TRUE(parse_messages_request(parse_request_body(R"({"max_tokens": 4, "messages": [
      {"role": "user", "content": "x"}], "output_config": {"format": {"type": "json_schema",
      "schema": {"type": "object"}}}})"),
                                     context())
                  .generation.json_format);
  EXPECT_EQ(messages_body(R"({"max_tokens": 1, "messages": [{"role": "user", "content": "x"}],
      "tools": [{"name": "a", "input_schema": {}}], "tool_choice": {"type": "any"}})")
                ["tool_choice"],
            "required");
}

TEST_F(RequestParsing, AnthropicFieldsNotImplementedAreRefusedByName) {
  const auto translate = [](const std::string& body) { return messages_body(body); };
  const std::string hi = R"("messages": [{"role": "user", "content": "hi"}])";
  expect_refusal(translate, R"({"max_tokens": 5, )" + hi + R"(, "container": "c"})", "container",
                 "`container` is not a field of /v1/messages");
  expect_refusal(translate, "{" + hi + "}", "max_tokens", "`max_tokens` is required");
  expect_refusal(translate,
                 R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image",
                     "source": {}}]}]})",
                 "messages[0].content[0]", "`image` block");
  expect_refusal(translate,
                 R"({"max_tokens": 5, )" + hi +
                     R"(, "tools": [{"type": "web_search_20250305", "name": "web_search"}]})",
                 "tools[0].type", "server tools");
  expect_refusal(translate, R"({"max_tokens": 5, )" + hi + R"(, "stop_sequences": [""]})",
                 "stop_sequences", "non-empty strings");
  expect_refusal(translate,
                 R"({"max_tokens": 2000, )" + hi +
                     R"(, "thinking": {"type": "enabled", "budget_tokens": 3000}})",
                 "thinking.budget_tokens", "less than `max_tokens`");
  expect_refusal(translate, R"({"max_tokens": 5, )" + hi + R"(, "thinking": {"type": "adaptive",
                     "display": "omitted"}})",
                 "thinking.display", "always shown");
  expect_refusal(translate, R"({"max_tokens": 5, )" + hi + R"(, "tool_choice": {"type": "any"}})",
                 "tool_choice", "`tools` is empty");
  expect_refusal(translate,
                 R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "text",
                     "text": "x", "citations": [{}]}]}]})",
                 "messages[0].content[0].citations", "not supported");
  // In Anthropic's shape: {type: error, error: {type, message}}.
  const Json body = anthropic_error_body(ApiError(400, "invalid_request_error", "bad"));
  EXPECT_EQ(body["type"], "error");
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_EQ(anthropic_error_body(ApiError(500, "server_error", "x"))["error"]["type"], "api_error");
}

TEST_F(RequestParsing, ResponsesInputItemsBecomeTheChatRequestTheyAsk) {
  const Json chat = responses_body(R"({"model": "m", "instructions": "Be brief.",
      "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Call it."}]},
        {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{\"city\":\"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]},
        {"role": "developer", "content": "Short answers."}],
      "tools": [{"type": "function", "name": "weather", "parameters": {"type": "object"}, "strict": true}],
      "tool_choice": {"type": "function", "name": "weather"}, "max_output_tokens": 30,
      "reasoning": {"effort": "low", "summary": "auto"}, "store": false, "stream": true,
      "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}}})");
  const Json& m = chat["messages"];
  ASSERT_EQ(m.size(), 6u) << chat.dump();
  EXPECT_EQ(m[0], Json({{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(m[2]["role"], "assistant");
  EXPECT_EQ(m[2]["reasoning_content"], "Call it.");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["name"], "weather");
  EXPECT_EQ(m[3], Json({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "sunny"}}));
  EXPECT_EQ(m[4], Json({{"role", "assistant"}, {"content", "Sunny."}}));
  EXPECT_EQ(m[5], Json({{"role", "system"}, {"content", "Short answers."}}));
  EXPECT_EQ(chat["max_tokens"], 30);
  EXPECT_EQ(chat["reasoning_effort"], "low");
  EXPECT_EQ(chat["tool_choice"]["function"]["name"], "weather");
  EXPECT_EQ(chat["tools"][0]["function"]["strict"], true);
  EXPECT_EQ(chat["response_format"]["json_schema"]["name"], "w");
  // A string input is one user message; effort none turns thinking off; the
  // JSON format reaches constrained decoding.
  const ResponsesRequest r =
      parse_responses_request(parse_request_body(R"({"input": "hi", "reasoning": {"effort": "none"},
          "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}}})"),
                              context());
  EXPECT_FALSE(r.chat.thinking);
  EXPECT_TRUE(r.chat.generation.json_format);
  EXPECT_EQ(r.settings["reasoning"]["effort"], "none");
}

TEST_F(RequestParsing, ResponsesFieldsNotImplementedAreRefusedByName) {
  const auto translate = [](const std::string& body) { return responses_body(body); };
  expect_refusal(translate, R"({"input": "hi", "store": true})", "store", "keeps no responses");
  expect_refusal(translate, R"({"input": "hi", "previous_response_id": "resp_1"})",
                 "previous_response_id", "keeps no responses");
  expect_refusal(translate, R"({"input": "hi", "top_logprobs": 2})", "top_logprobs",
                 "`top_logprobs` is not a field of /v1/responses");
  expect_refusal(translate, R"({"input": "hi", "tools": [{"type": "web_search"}]})",
                 "tools[0].type", "function tools only");
  expect_refusal(
      translate,
      R"({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]})",
      "input[0].content[0]", "`input_image` part");
  expect_refusal(translate, R"({"input": [{"type": "item_reference", "id": "x"}]})",
                 "input[0].type", "`item_reference`");
  expect_refusal(translate, R"({"input": "hi", "reasoning": {"effort": "max"}})",
                 "reasoning.effort", "none, minimal, low");
  expect_refusal(translate, R"({"input": "hi", "text": {"verbosity": "low"}})", "text.verbosity",
                 "not a field of text");
  expect_refusal(translate, R"({"input": "hi", "include": ["reasoning.encrypted_content"]})",
                 "include", "not supported");
  expect_refusal(translate, R"({})", "input", "`input` is required");
  expect_refusal(translate,
                 R"({"input": [{"role": "user", "content": "hi"}, {"type": "reasoning",
                     "summary": [{"type": "summary_text", "text": "t"}]}]})",
                 "input[1]", "no assistant message or function_call follows");
}

}  // namespace
}  // namespace glmrt::serve
