// The text side of a streamed answer: stop strings matched across token
// boundaries, reasoning split from content at </think>, and GLM-5 tool calls
// parsed back into OpenAI's shape; each fed piece by piece the way tokens
// arrive, including splits inside the markers.
#include <glmrt/generate/stop_tokens.h>
#include <glmrt/serve/chat_answer.h>
#include <glmrt/serve/reasoning_splitter.h>
#include <glmrt/serve/stop_strings.h>
#include <glmrt/serve/tool_calls.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace glmrt::serve {
namespace {

using Json = nlohmann::ordered_json;

// Every way of cutting `text` into pieces of `size` bytes.
std::vector<std::string> pieces(const std::string& text, size_t size) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); i += size) out.push_back(text.substr(i, size));
  return out;
}

std::string through_stops(const std::vector<std::string>& stops, const std::string& text,
                          size_t piece_size, bool* stopped = nullptr) {
  StopStringFilter filter(stops);
  std::string out;
  for (const auto& p : pieces(text, piece_size)) out += filter.push(p);
  if (!filter.stopped()) out += filter.flush();
  if (stopped) *stopped = filter.stopped();
  return out;
}

TEST(StopStrings, CutBeforeTheFirstStopWhateverThePieceSize) {
  for (size_t size = 1; size <= 8; ++size) {
    bool stopped = false;
    EXPECT_EQ(through_stops({"\n\nUser"}, "Hello there.\n\nUser: more", size, &stopped),
              "Hello there.")
        << size;
    EXPECT_TRUE(stopped);
  }
}

TEST(StopStrings, TheEarliestOfSeveralWins) {
  for (size_t size = 1; size <= 5; ++size)
    EXPECT_EQ(through_stops({"xyz", "b"}, "aaabxyz", size), "aaa") << size;
}

TEST(StopStrings, APartialMatchThatFailsIsEmittedWhole) {
  for (size_t size = 1; size <= 4; ++size) {
    bool stopped = true;
    EXPECT_EQ(through_stops({"STOP"}, "a STO b STOx", size, &stopped), "a STO b STOx") << size;
    EXPECT_FALSE(stopped);
  }
}

TEST(StopStrings, HeldTextComesOutAtTheEnd) {
  StopStringFilter filter({"END"});
  EXPECT_EQ(filter.push("abcE"), "abc");
  EXPECT_EQ(filter.push("N"), "");
  EXPECT_EQ(filter.flush(), "EN");
}

TEST(StopStrings, NothingAfterTheStop) {
  StopStringFilter filter({"."});
  EXPECT_EQ(filter.push("one. two"), "one");
  EXPECT_EQ(filter.push(" three"), "");
  EXPECT_EQ(filter.flush(), "");
}

ChatDelta split_all(bool thinking, const std::string& text, size_t size) {
  ReasoningSplitter splitter(thinking);
  ChatDelta total;
  for (const auto& p : pieces(text, size)) {
    const ChatDelta d = splitter.push(p);
    total.reasoning += d.reasoning;
    total.content += d.content;
  }
  const ChatDelta d = splitter.flush();
  total.reasoning += d.reasoning;
  total.content += d.content;
  return total;
}

TEST(ReasoningSplitter, ThinkingOnSplitsAtCloseWhateverThePieceSize) {
  for (size_t size = 1; size <= 10; ++size) {
    const ChatDelta d = split_all(true, "let me see</think>The answer.", size);
    EXPECT_EQ(d.reasoning, "let me see") << size;
    EXPECT_EQ(d.content, "The answer.") << size;
  }
}

TEST(ReasoningSplitter, ARepeatedOpeningTagIsDropped) {
  for (size_t size = 1; size <= 9; ++size) {
    const ChatDelta d = split_all(true, "<think>hmm</think>ok", size);
    EXPECT_EQ(d.reasoning, "hmm") << size;
    EXPECT_EQ(d.content, "ok") << size;
  }
}

TEST(ReasoningSplitter, CutOffBeforeCloseIsAllReasoning) {
  const ChatDelta d = split_all(true, "still thinking </thi", 3);
  EXPECT_EQ(d.reasoning, "still thinking </thi");
  EXPECT_EQ(d.content, "");
}

TEST(ReasoningSplitter, ThinkingOffIsAllContentEvenWithAStrayClose) {
  const ChatDelta d = split_all(false, "a</think>b", 2);
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "a</think>b");
}

const Json kTools = Json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                   "zip": {"type": "string"}}}}}
])");

TEST(ToolCalls, ParsedWithTypesFromTheSchema) {
  std::string trailing;
  const auto calls = parse_tool_calls(
      "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
      "<arg_key>days</arg_key><arg_value>3</arg_value><arg_key>zip</arg_key>"
      "<arg_value>75001</arg_value></tool_call>",
      kTools, trailing);
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ((*calls)[0].name, "get_weather");
  EXPECT_EQ(Json::parse((*calls)[0].arguments),
            Json::parse(R"({"city": "Paris", "days": 3, "zip": "75001"})"));
  EXPECT_EQ(trailing, "");
}

TEST(ToolCalls, SeveralCallsAndNoArguments) {
  std::string trailing;
  const auto calls = parse_tool_calls(
      "<tool_call>now</tool_call>\n<tool_call>get_weather<arg_key>city</arg_key><arg_value>"
      "Rome</arg_value></tool_call> done",
      kTools, trailing);
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[0].name, "now");
  EXPECT_EQ((*calls)[0].arguments, "{}");
  EXPECT_EQ((*calls)[1].arguments, R"({"city":"Rome"})");
  EXPECT_EQ(trailing, "done");
}

TEST(ToolCalls, UnknownToolsReadJsonValuesElseText) {
  std::string trailing;
  const auto calls = parse_tool_calls(
      "<tool_call>f<arg_key>a</arg_key><arg_value>[1, 2]</arg_value><arg_key>b</arg_key>"
      "<arg_value>plain words</arg_value></tool_call>",
      Json(), trailing);
  ASSERT_TRUE(calls);
  EXPECT_EQ(Json::parse((*calls)[0].arguments),
            Json::parse(R"({"a": [1, 2], "b": "plain words"})"));
}

TEST(ToolCalls, MalformedOrCutOffCallsAreNotCalls) {
  std::string trailing;
  EXPECT_FALSE(parse_tool_calls("<tool_call>f<arg_key>a</arg_key><arg_value>1", kTools, trailing));
  EXPECT_FALSE(parse_tool_calls("<tool_call></tool_call>", kTools, trailing));
  EXPECT_FALSE(
      parse_tool_calls("<tool_call>f<arg_key>a</arg_key>junk</tool_call>", kTools, trailing));
}

TEST(ToolCallCollector, ContentBeforeTheCallStreamsTheCallIsHeld) {
  for (size_t size = 1; size <= 12; ++size) {
    ToolCallCollector collector;
    std::string shown;
    for (const auto& p :
         pieces("Let me check.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo"
                "</arg_value></tool_call>",
                size))
      shown += collector.push(p);
    const auto result = collector.finish(kTools);
    EXPECT_EQ(shown + result.content, "Let me check.") << size;
    ASSERT_EQ(result.calls.size(), 1u) << size;
    EXPECT_EQ(result.calls[0].arguments, R"({"city":"Oslo"})");
  }
}

TEST(ToolCallCollector, AnUnfinishedCallIsShownAsContentAtTheEnd) {
  ToolCallCollector collector;
  std::string shown = collector.push("a <tool_call>f<arg_key>x");
  const auto result = collector.finish(kTools);
  EXPECT_TRUE(result.calls.empty());
  EXPECT_EQ(shown + result.content, "a <tool_call>f<arg_key>x");
}

TEST(ChatAnswer, TokensThroughStopsReasoningAndTools) {
  const auto tokenizer = text::Tokenizer::from_file(std::filesystem::path(GLMRT_FIXTURES) /
                                                    "glm_tiny" / "tokenizer.json");
  const std::string generated =
      "hmm</think>Sure.<tool_call>get_weather<arg_key>city</arg_key>"
      "<arg_value>Oslo</arg_value></tool_call>";
  const auto ids = tokenizer.encode(generated, false);
  ChatAnswer answer(tokenizer, {}, true, kTools);
  std::string reasoning, content;
  for (auto id : ids) {
    const ChatDelta d = answer.push(static_cast<int32_t>(id));
    reasoning += d.reasoning;
    content += d.content;
  }
  const auto ending = answer.finish();
  reasoning += ending.delta.reasoning;
  content += ending.delta.content;
  EXPECT_EQ(reasoning, "hmm");
  EXPECT_EQ(content, "Sure.");
  EXPECT_EQ(answer.reasoning(), "hmm");
  EXPECT_EQ(answer.content(), "Sure.");
  ASSERT_EQ(ending.calls.size(), 1u);
  EXPECT_EQ(ending.calls[0].name, "get_weather");

  ChatAnswer stopped(tokenizer, {"ure"}, true, Json());
  for (auto id : ids) {
    stopped.push(static_cast<int32_t>(id));
    if (stopped.stopped_by_string()) break;
  }
  stopped.finish();
  EXPECT_TRUE(stopped.stopped_by_string());
  EXPECT_EQ(stopped.content(), "S");
}

// What `answer` shows of `generated`, fed token by token: reasoning | content.
std::string shown(ChatAnswer& answer, const std::vector<text::TokenId>& ids) {
  std::string reasoning, content;
  for (auto id : ids) {
    const ChatDelta d = answer.push(static_cast<int32_t>(id));
    reasoning += d.reasoning;
    content += d.content;
  }
  const auto ending = answer.finish();
  return reasoning + ending.delta.reasoning + "|" + content + ending.delta.content;
}

TEST(ChatAnswer, SpecialTokensAreSkippedButForTheMarkersBeingParsed) {
  const auto tokenizer = text::Tokenizer::from_file(std::filesystem::path(GLMRT_FIXTURES) /
                                                    "glm_tiny" / "tokenizer.json");
  const auto ids =
      tokenizer.encode("hm[MASK]m</think>Su<sop>re.<think>x</think><tool_call>", false);
  ChatAnswer thinking(tokenizer, {}, true, Json());
  EXPECT_EQ(shown(thinking, ids), "hmm|Sure.x");
  ChatAnswer raw(tokenizer, {}, true, Json(), false);
  EXPECT_EQ(shown(raw, ids), "hm[MASK]m|Su<sop>re.<think>x</think><tool_call>");
  // Thinking off: every marker is a skipped special token; with tools the
  // call markers are read (a call that never closes stays text).
  ChatAnswer plain(tokenizer, {}, false, Json());
  EXPECT_EQ(shown(plain, ids), "|hmmSure.x");
  ChatAnswer tools(tokenizer, {}, false, kTools);
  EXPECT_EQ(shown(tools, ids), "|hmmSure.x<tool_call>");
}

TEST(ChatAnswer, AForcedCallOpeningIsReadAsTheAnswersStart) {
  const auto tokenizer = text::Tokenizer::from_file(std::filesystem::path(GLMRT_FIXTURES) /
                                                    "glm_tiny" / "tokenizer.json");
  ChatAnswer answer(tokenizer, {}, true, kTools);
  for (auto id : tokenizer.encode("</think><tool_call>get_weather", false))
    answer.push(static_cast<int32_t>(id));
  for (auto id :
       tokenizer.encode("<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>", false))
    answer.push(static_cast<int32_t>(id));
  const auto ending = answer.finish();
  ASSERT_EQ(ending.calls.size(), 1u);
  EXPECT_EQ(ending.calls[0].name, "get_weather");
  EXPECT_EQ(ending.calls[0].arguments, R"({"city":"Oslo"})");
  EXPECT_EQ(answer.content(), "");
  EXPECT_EQ(answer.reasoning(), "");
}

TEST(StopTokens, ChatAnswersEndAtEveryRoleToken) {
  const auto tokenizer = text::Tokenizer::from_file(std::filesystem::path(GLMRT_FIXTURES) /
                                                    "glm_tiny" / "tokenizer.json");
  std::vector<int32_t> expected = {3};
  for (const char* role : {"<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"})
    expected.push_back(static_cast<int32_t>(*tokenizer.token_to_id(role)));
  std::sort(expected.begin(), expected.end());
  const auto user = static_cast<int32_t>(*tokenizer.token_to_id("<|user|>"));
  EXPECT_EQ(with_role_tokens({3, user}, tokenizer), expected);
}

}  // namespace
}  // namespace glmrt::serve
