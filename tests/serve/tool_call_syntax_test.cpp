// Tool calls in each family's format read back into OpenAI's shape: the
// family chosen from the chat template, every assistant tool-call text of the
// Python Jinja2 renders (tests/fixtures/tokenizer/chat) parsed back to the
// conversation's calls, the same result whatever byte the stream splits at,
// malformed calls returned as text, and the markers never in the content.
#include <glmrt/serve/chat_answer.h>
#include <glmrt/serve/tool_call_syntax.h>
#include <glmrt/serve/tool_calls.h>

#include <glmrt/text/model_chat_template.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace glmrt::serve {
namespace {

using Json = nlohmann::ordered_json;
const std::filesystem::path kFixtures = GLMRT_FIXTURES;

std::vector<Json> render_rows() {
  std::ifstream in(kFixtures / "tokenizer" / "chat" / "renders-deepseek-kimi.jsonl");
  std::vector<Json> rows;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) rows.push_back(Json::parse(line));
  return rows;
}

/// The family each render fixture's template belongs to.
const ToolCallSyntax& family_of_template(const std::string& name) {
  if (name.starts_with("kimi")) return kimi_k2_tool_call_syntax();
  if (name == "deepseek-v3.1") return deepseek_v31_tool_call_syntax();
  return deepseek_v3_tool_call_syntax();  // deepseek-v3, -0324, r1, r1-0528
}

/// The closing marker of a calls section of `syntax`.
std::string section_end(const ToolCallSyntax& syntax) {
  return syntax.name() == "kimi-k2" ? "<|tool_calls_section_end|>" : "<｜tool▁calls▁end｜>";
}

/// Every calls section of a rendered conversation, markers included.
std::vector<std::string> sections(const std::string& rendered, const ToolCallSyntax& syntax) {
  std::vector<std::string> found;
  const std::string open(syntax.opening()), close = section_end(syntax);
  for (size_t at = rendered.find(open); at != std::string::npos; at = rendered.find(open, at)) {
    const size_t end = rendered.find(close, at);
    if (end == std::string::npos) break;
    found.push_back(rendered.substr(at, end + close.size() - at));
    at = end;
  }
  return found;
}

/// What the conversation's assistant messages called, message by message.
std::vector<Json> conversation_calls(const Json& messages) {
  std::vector<Json> calls;
  for (const Json& m : messages)
    if (m.value("role", "") == "assistant" && m.contains("tool_calls") &&
        m["tool_calls"].is_array() && !m["tool_calls"].empty())
      calls.push_back(m["tool_calls"]);
  return calls;
}

bool same_calls(const std::vector<ToolCall>& parsed, const Json& expected, bool with_ids) {
  if (parsed.size() != expected.size()) return false;
  for (size_t i = 0; i < parsed.size(); ++i) {
    const Json& f = expected[i]["function"];
    const Json arguments = f["arguments"].is_string()
                               ? Json::parse(f["arguments"].get<std::string>())
                               : f["arguments"];
    if (parsed[i].name != f["name"] || Json::parse(parsed[i].arguments) != arguments) return false;
    if (with_ids && parsed[i].id != expected[i]["id"]) return false;
  }
  return true;
}

/// Kimi-K2's ids name the function (functions.NAME:N); a render of a
/// conversation whose ids do not cannot be read back to its names.
bool kimi_ids_name_functions(const Json& calls) {
  for (const Json& c : calls)
    if (!c["id"].is_string() || !c["id"].get<std::string>().starts_with("functions.")) return false;
  return true;
}

/// Content and calls of `text` streamed through a collector in two pieces
/// split at byte `split`.
ToolCallCollector::Result streamed(const ToolCallSyntax& syntax, const std::string& text,
                                   size_t split, std::string& shown) {
  ToolCallCollector collector(syntax);
  shown = collector.push(text.substr(0, split));
  shown += collector.push(text.substr(split));
  ToolCallCollector::Result result = collector.finish(Json());
  shown += result.content;
  return result;
}

TEST(ToolCallSyntax, ChosenFromTheChatTemplate) {
  EXPECT_EQ(tool_call_syntax_for("").name(), "glm");  // the built-in template
  EXPECT_EQ(tool_call_syntax_for("{{ '<tool_call>' + name + '<arg_key>' }}").name(), "glm");
  EXPECT_EQ(tool_call_syntax_for("'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + type + "
                                 "'<｜tool▁sep｜>' + name + '\\n' + '```json' + '\\n'")
                .name(),
            "deepseek-v3");
  EXPECT_EQ(tool_call_syntax_for("'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + name + "
                                 "'<｜tool▁sep｜>' + arguments")
                .name(),
            "deepseek-v3.1");
  EXPECT_EQ(tool_call_syntax_for("<|tool_calls_section_begin|><|tool_call_begin|>{{ id }}"
                                 "<|tool_call_argument_begin|>")
                .name(),
            "kimi-k2");
  EXPECT_EQ(tool_call_syntax_for("no calls at all").name(), "glm");
  for (const char* name : {"glm", "deepseek-v3", "deepseek-v3.1", "kimi-k2"})
    EXPECT_EQ(tool_call_syntax_named(name)->name(), name);
  EXPECT_EQ(tool_call_syntax_named("llama"), nullptr);
}

TEST(ToolCallSyntax, ChosenFromTheTemplateAModelFolderShips) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("glmrt-tool-syntax-{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "chat_template.jinja")
      << "{%- for m in messages %}{%- for tool in m.tool_calls or [] %}"
         "{{ '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool.function.name + '<｜tool▁sep｜>' "
         "+ tool.function.arguments + '<｜tool▁call▁end｜><｜tool▁calls▁end｜>' }}"
         "{%- endfor %}{%- endfor %}";
  const auto chat_template = text::ModelChatTemplate::for_model(dir);
  EXPECT_EQ(tool_call_syntax_for(chat_template.tools_text()).name(), "deepseek-v3.1");
  std::filesystem::remove_all(dir);
}

TEST(ToolCallSyntax, EveryRenderedCallIsReadBackToTheConversationsCalls) {
  std::map<std::string, int> round_trips, refused;  // by family
  for (const Json& row : render_rows()) {
    if (!row.contains("rendered")) continue;  // Jinja2 raised: nothing rendered
    const ToolCallSyntax& syntax = family_of_template(row["template"]);
    const std::string rendered = row["rendered"];
    const std::vector<Json> expected = conversation_calls(row["messages"]);
    size_t next = 0;  // templates may leave a message's calls out: match in order
    for (const std::string& section : sections(rendered, syntax)) {
      const std::string where = row["template"].get<std::string>() + " / " +
                                row["conversation"].get<std::string>() + ": " + section;
      std::string trailing;
      const auto parsed = syntax.parse(section, Json(), trailing);
      const bool kimi = syntax.name() == "kimi-k2";
      // Kimi-K2 reads a call's name from its id: a conversation whose ids are
      // not functions.NAME:N is rendered into calls that are read as text.
      const auto matches = [&](const Json& calls) {
        if (kimi && !kimi_ids_name_functions(calls)) return !parsed;
        return parsed && same_calls(*parsed, calls, kimi);
      };
      while (next < expected.size() && !matches(expected[next])) ++next;
      ASSERT_LT(next, expected.size()) << where;
      if (kimi && !kimi_ids_name_functions(expected[next])) {
        ++refused[std::string(syntax.name())];
        ++next;
        continue;
      }
      ASSERT_TRUE(parsed) << where;
      EXPECT_EQ(trailing, "") << where;
      ++round_trips[std::string(syntax.name())];
      ++next;

      // Streamed, split at every byte: the same calls, and only the text
      // before the calls shown.
      const std::string answer = "Let me look. " + section;
      for (size_t split = 0; split <= answer.size(); ++split) {
        std::string shown;
        const auto result = streamed(syntax, answer, split, shown);
        ASSERT_EQ(shown, "Let me look. ") << where << " split at " << split;
        ASSERT_TRUE(same_calls(result.calls, expected[next - 1], false)) << where << " " << split;
      }
    }
  }
  EXPECT_GE(round_trips["deepseek-v3"], 20);
  EXPECT_GE(round_trips["deepseek-v3.1"], 5);
  EXPECT_GE(round_trips["kimi-k2"], 1);
  EXPECT_GE(refused["kimi-k2"], 1);
}

TEST(ToolCallSyntax, ModelAnswersOfEachFamilyParse) {
  std::string trailing;
  const auto v3 = deepseek_v3_tool_call_syntax().parse(
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
      "{\"city\": \"Oslo\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>"
      "now\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> done",
      Json(), trailing);
  ASSERT_TRUE(v3);
  ASSERT_EQ(v3->size(), 2u);
  EXPECT_EQ((*v3)[0].name, "get_weather");
  EXPECT_EQ((*v3)[0].arguments, R"({"city":"Oslo"})");
  EXPECT_EQ((*v3)[1].name, "now");
  EXPECT_EQ((*v3)[1].id, "");
  EXPECT_EQ(trailing, "done");
  // The answer may end right after its last call.
  const auto v31 = deepseek_v31_tool_call_syntax().parse(
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Oslo\"}"
      "<｜tool▁call▁end｜>",
      Json(), trailing);
  ASSERT_TRUE(v31);
  EXPECT_EQ((*v31)[0].arguments, R"({"city":"Oslo"})");
  const auto kimi = kimi_k2_tool_call_syntax().parse(
      "<|tool_calls_section_begin|> <|tool_call_begin|> functions.get_weather:0 "
      "<|tool_call_argument_begin|> {\"city\": \"Oslo\"} <|tool_call_end|>"
      "<|tool_call_begin|>lookup.v2:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
      "<|tool_calls_section_end|>",
      Json(), trailing);
  ASSERT_TRUE(kimi);
  ASSERT_EQ(kimi->size(), 2u);
  EXPECT_EQ((*kimi)[0].id, "functions.get_weather:0");
  EXPECT_EQ((*kimi)[0].name, "get_weather");
  EXPECT_EQ((*kimi)[1].name, "lookup.v2");
}

TEST(ToolCallSyntax, MalformedCallsAreText) {
  const std::vector<std::pair<const ToolCallSyntax*, std::string>> malformed = {
      // cut off by max_tokens
      {&deepseek_v3_tool_call_syntax(),
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1"},
      // no fenced block, arguments not an object, no name, no separator, junk after
      {&deepseek_v3_tool_call_syntax(),
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n{}<｜tool▁call▁end｜>"},
      {&deepseek_v31_tool_call_syntax(),
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>[1, 2]<｜tool▁call▁end｜>"},
      {&deepseek_v31_tool_call_syntax(),
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜><｜tool▁sep｜>{}<｜tool▁call▁end｜>"},
      {&deepseek_v31_tool_call_syntax(),
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f {}<｜tool▁call▁end｜>"},
      {&deepseek_v31_tool_call_syntax(),
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜>junk"},
      {&deepseek_v31_tool_call_syntax(), "<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>"},
      {&deepseek_v31_tool_call_syntax(),
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>" + std::string(200, '[') +
           std::string(200, ']') + "<｜tool▁call▁end｜>"},
      // Kimi: an id that names no function, arguments cut off, not JSON
      {&kimi_k2_tool_call_syntax(),
       "<|tool_calls_section_begin|><|tool_call_begin|>call_1<|tool_call_argument_begin|>{}"
       "<|tool_call_end|><|tool_calls_section_end|>"},
      {&kimi_k2_tool_call_syntax(),
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:x<|tool_call_argument_begin|>{}"
       "<|tool_call_end|>"},
      {&kimi_k2_tool_call_syntax(),
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
       "{\"a\":"},
      {&kimi_k2_tool_call_syntax(),
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
       "city=Oslo<|tool_call_end|>"},
  };
  for (const auto& [syntax, text] : malformed) {
    std::string trailing;
    EXPECT_FALSE(syntax->parse(text, Json(), trailing)) << text;
    // Streamed: shown whole, as text, at the end; no call.
    std::string shown;
    const auto result = streamed(*syntax, "Hi " + text, 5, shown);
    EXPECT_TRUE(result.calls.empty()) << text;
    EXPECT_EQ(shown, "Hi " + text);
  }
}

TEST(ToolCallSyntax, ADeepseekAnswersMarkersAreReadNotShown) {
  // DeepSeek's markers are special tokens of its vocabulary: skipped as
  // special, they would never reach the parser.
  const auto tokenizer =
      text::Tokenizer::from_file(kFixtures / "tokenizer" / "deepseek_v3" / "tokenizer.json");
  const Json tools = Json::parse(R"([{"type": "function", "function": {"name": "get_weather"}}])");
  const std::string generated =
      "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": "
      "\"Oslo\"}"
      "<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  const auto ids = tokenizer.encode(generated, false);
  ChatAnswer answer(tokenizer, {}, false, tools, true, deepseek_v31_tool_call_syntax());
  std::string content;
  for (auto id : ids) content += answer.push(static_cast<int32_t>(id)).content;
  const auto ending = answer.finish();
  content += ending.delta.content;
  EXPECT_EQ(content, "Sure.");
  EXPECT_EQ(answer.content(), "Sure.");
  ASSERT_EQ(ending.calls.size(), 1u);
  EXPECT_EQ(ending.calls[0].name, "get_weather");
  EXPECT_EQ(ending.calls[0].arguments, R"({"city":"Oslo"})");
  // The forced opening for tool_choice, read as the answer's start.
  ChatAnswer forced(tokenizer, {}, false, tools, true, deepseek_v31_tool_call_syntax());
  for (auto id :
       tokenizer.encode(deepseek_v31_tool_call_syntax().forced_opening("get_weather"), false))
    forced.push(static_cast<int32_t>(id));
  for (auto id : tokenizer.encode("{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>", false))
    forced.push(static_cast<int32_t>(id));
  const auto forced_ending = forced.finish();
  ASSERT_EQ(forced_ending.calls.size(), 1u);
  EXPECT_EQ(forced_ending.calls[0].name, "get_weather");
  EXPECT_EQ(forced.content(), "");
}

TEST(ToolCallSyntax, ForcedOpeningsNameTheirFunction) {
  for (const ToolCallSyntax* syntax :
       {&glm_tool_call_syntax(), &deepseek_v3_tool_call_syntax(), &deepseek_v31_tool_call_syntax(),
        &kimi_k2_tool_call_syntax()}) {
    const std::string opening = syntax->forced_opening("get_weather");
    EXPECT_TRUE(opening.starts_with(syntax->opening())) << syntax->name();
    EXPECT_EQ(syntax->named_function(opening), "get_weather") << syntax->name();
    EXPECT_EQ(syntax->named_function("plain text"), "") << syntax->name();
  }
}

TEST(ToolCallSyntax, ACutCallKeepsTheArgumentsWrittenSoFar) {
  const Json tools = Json::parse(R"([{"type": "function", "function": {"name": "lookup_verdict",
      "parameters": {"type": "object", "properties": {"case_id": {"type": "integer"}}}}}])");
  const ToolCallSyntax& glm = glm_tool_call_syntax();
  const std::string opening = glm.forced_opening("lookup_verdict");
  EXPECT_EQ(glm.partial_arguments(opening, "lookup_verdict", tools), "{}");
  // Complete pairs typed by the tool's schema; the cut value's text as a string.
  EXPECT_EQ(glm.partial_arguments(opening + "<arg_key>case_id</arg_key><arg_value>7</arg_value>"
                                            "<arg_key>note</arg_key><arg_value>gui",
                                  "lookup_verdict", tools),
            R"({"case_id":7,"note":"gui"})");
  EXPECT_EQ(glm.partial_arguments(opening + "<arg_key>case_id</arg_key><arg_value>7</arg_value>"
                                            "<arg_key>no",
                                  "lookup_verdict", tools),
            R"({"case_id":7})");
  // The JSON formats: the text written so far, as it is.
  for (const ToolCallSyntax* syntax :
       {&deepseek_v3_tool_call_syntax(), &deepseek_v31_tool_call_syntax(),
        &kimi_k2_tool_call_syntax()}) {
    const std::string forced = syntax->forced_opening("lookup_verdict");
    EXPECT_EQ(syntax->partial_arguments(forced, "lookup_verdict", tools), "{}") << syntax->name();
    EXPECT_EQ(syntax->partial_arguments(forced + R"({"case_id": 7, "note": "gu)", "lookup_verdict",
                                        tools),
              R"({"case_id": 7, "note": "gu)")
        << syntax->name();
  }
}

}  // namespace
}  // namespace glmrt::serve
