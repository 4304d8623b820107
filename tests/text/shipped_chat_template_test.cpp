// A model directory's own chat template: found where transformers looks for
// it and rendered by the Jinja2 engine with transformers' variables; the
// built-in GLM-5 renderer without one, or when the caller chooses it.
#include <glmrt/base/error.h>
#include <glmrt/text/chat_template.h>
#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/shipped_chat_template.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "fixture_rows.h"

namespace glmrt::text {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::tokenizer_fixture;

const nlohmann::ordered_json kRequest =
    nlohmann::ordered_json::parse(R"({"messages": [{"role": "user", "content": "hi"}]})");

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

// A copy of the glm_tiny tokenizer fixture's model files (config.json,
// tokenizer_config.json without a template) to add templates to.
class ShippedTemplate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("glmrt-chat-template-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    for (const char* name : {"config.json", "tokenizer_config.json"})
      fs::copy_file(tokenizer_fixture(std::string("glm_tiny/") + name), dir_ / name);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // tokenizer_config.json with its `chat_template` set to `value` (JSON).
  void set_config_template(const std::string& value) {
    auto config = nlohmann::json::parse(read(dir_ / "tokenizer_config.json"));
    config["chat_template"] = nlohmann::json::parse(value);
    write(dir_ / "tokenizer_config.json", config.dump(2));
  }

  std::string refusal() {
    try {
      ModelChatTemplate::for_model(dir_).render(kRequest);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "the model's template was accepted";
    return {};
  }

  std::string rendered(const nlohmann::ordered_json& request = kRequest) {
    return ModelChatTemplate::for_model(dir_).render(request);
  }

  fs::path dir_;
};

TEST_F(ShippedTemplate, NoTemplateMeansTheBuiltInOne) {
  EXPECT_TRUE(find_shipped_chat_templates(dir_).empty());
  EXPECT_EQ(rendered(), render_glm5_chat(kRequest));
  EXPECT_EQ(ModelChatTemplate::for_model(dir_).source(), "the built-in GLM-5 template");
}

TEST_F(ShippedTemplate, AJinjaFileIsRenderedByTheEngine) {
  write(dir_ / "chat_template.jinja", "{% for m in messages %}[{{ m.content }}]{% endfor %}\n");
  EXPECT_EQ(rendered(), "[hi]");
  EXPECT_EQ(ModelChatTemplate::for_model(dir_).source(), (dir_ / "chat_template.jinja").string());
  // The built-in template when asked for, whatever the directory ships.
  EXPECT_EQ(ModelChatTemplate::for_model(dir_, ChatTemplateChoice::builtin).render(kRequest),
            render_glm5_chat(kRequest));
}

TEST_F(ShippedTemplate, TheJinjaFileComesBeforeTheTokenizerConfig) {
  set_config_template(R"("config's template")");
  write(dir_ / "chat_template.jinja", "file's template");
  const auto found = find_shipped_chat_templates(dir_);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].text, "file's template");
  EXPECT_EQ(rendered(), "file's template");
}

TEST_F(ShippedTemplate, TheToolUseTemplateIsTakenForRequestsWithTools) {
  write(dir_ / "chat_template.jinja", "main");
  write(dir_ / "additional_chat_templates" / "tool_use.jinja", "{{ tools | length }} tool");
  EXPECT_EQ(rendered(), "main");
  const auto with_tools = nlohmann::ordered_json::parse(
      R"({"messages": [], "tools": [{"type": "function", "function": {"name": "f"}}]})");
  EXPECT_EQ(rendered(with_tools), "1 tool");
}

TEST_F(ShippedTemplate, AConfigTemplateGetsTheSpecialTokensAndSwitches) {
  set_config_template(
      R"("{{ bos_token }}|{{ eos_token }}|{{ add_generation_prompt }}|{{ enable_thinking }}|{{ thinking }}|{{ tools }}")");
  // glm_tiny's tokenizer_config.json has an eos_token and no bos_token.
  EXPECT_EQ(rendered(), "|<|endoftext|>|True|||None");
  const auto request = nlohmann::ordered_json::parse(
      R"({"messages": [], "enable_thinking": false,
          "chat_template_kwargs": {"add_generation_prompt": false, "thinking": true}})");
  EXPECT_EQ(rendered(request), "|<|endoftext|>|False|False|True|None");
}

TEST_F(ShippedTemplate, AddedTokenObjectsGiveTheirContent) {
  auto config = nlohmann::json::parse(read(dir_ / "tokenizer_config.json"));
  config["bos_token"] = {{"content", "<s>"}, {"lstrip", false}};
  config["chat_template"] = "{{ bos_token }}";
  write(dir_ / "tokenizer_config.json", config.dump());
  EXPECT_EQ(rendered(), "<s>");
  config["bos_token"] = 7;
  write(dir_ / "tokenizer_config.json", config.dump());
  EXPECT_THAT(refusal(), HasSubstr("tokenizer_config.json: key `bos_token`: expected a string"));
}

TEST_F(ShippedTemplate, NamedConfigTemplatesAreReadAsTransformersDoes) {
  set_config_template(
      R"([{"name": "rag", "template": "a"}, {"name": "default", "template": "b"},
          {"name": "tool_use", "template": "c"}])");
  const auto found = find_shipped_chat_templates(dir_);
  ASSERT_EQ(found.size(), 2u);  // "rag" is never picked for glmrt's requests
  EXPECT_EQ(found[0].text, "b");
  EXPECT_THAT(found[0].source, HasSubstr("key `chat_template` (the entry named `default`)"));
  EXPECT_EQ(found[1].text, "c");
  EXPECT_EQ(found[1].name, "tool_use");
  EXPECT_EQ(rendered(), "b");
  EXPECT_EQ(rendered(nlohmann::ordered_json::parse(R"({"messages": [], "tools": [{}]})")), "c");
}

TEST_F(ShippedTemplate, MalformedConfigTemplatesAreClearErrors) {
  set_config_template(R"([{"name": "rag", "template": "a"}])");
  EXPECT_THAT(refusal(), HasSubstr("key `chat_template`: lists templates named `rag` but "
                                   "none named `default`"));
  set_config_template(R"([{"name": "default"}])");
  EXPECT_THAT(refusal(), HasSubstr("key `chat_template`[0]: expected an object"));
  set_config_template("42");
  EXPECT_THAT(refusal(), HasSubstr("expected a string or a list"));
  write(dir_ / "tokenizer_config.json", "{");
  EXPECT_THAT(refusal(), HasSubstr("tokenizer_config.json: not a JSON object"));
  // The built-in template reads none of it.
  EXPECT_NO_THROW(ModelChatTemplate::for_model(dir_, ChatTemplateChoice::builtin));
}

TEST_F(ShippedTemplate, ASyntaxErrorNamesTheFileLineAndConstruct) {
  write(dir_ / "chat_template.jinja", "line one\n{% if messages %}\n{{ messages[0] }}\n");
  EXPECT_THAT(refusal(), AllOf(HasSubstr((dir_ / "chat_template.jinja").string() + ":2: "),
                               HasSubstr("{% if %}"), HasSubstr("not closed")));
  set_config_template(R"("{{ raise_exception('no system role here') }}")");
  fs::remove(dir_ / "chat_template.jinja");
  EXPECT_THAT(refusal(), AllOf(HasSubstr("tokenizer_config.json: key `chat_template`:1: "),
                               HasSubstr("no system role here")));
}

TEST_F(ShippedTemplate, AModelTypeWithoutABuiltInRendererNeedsATemplate) {
  write(dir_ / "config.json", R"({"model_type": "deepseek_v3"})");
  EXPECT_THAT(refusal(), AllOf(HasSubstr("model_type 'deepseek_v3' has no built-in chat template"),
                               HasSubstr("ships none")));
  write(dir_ / "chat_template.jinja", "{{ messages[-1].content }}");
  EXPECT_EQ(rendered(), "hi");
}

// OpenAI clients send arguments as JSON strings; a template that iterates
// them (GLM's) gets them parsed once it has failed on the strings.
TEST_F(ShippedTemplate, StringArgumentsAreParsedForTemplatesThatNeedObjects) {
  write(dir_ / "chat_template.jinja",
        "{% for m in messages %}{% for k, v in m.tool_calls[0].function.arguments.items() %}"
        "{{ k }}={{ v }}{% endfor %}{% endfor %}");
  const auto request = nlohmann::ordered_json::parse(
      R"({"messages": [{"role": "assistant", "tool_calls": [{"type": "function",
          "function": {"name": "f", "arguments": "{\"city\": \"Oslo\"}"}}]}]})");
  EXPECT_EQ(rendered(request), "city=Oslo");
  // A template that concatenates them (DeepSeek's) gets the strings.
  write(dir_ / "chat_template.jinja", "{{ messages[0].tool_calls[0].function.arguments + '!' }}");
  EXPECT_EQ(rendered(request), "{\"city\": \"Oslo\"}!");
}

TEST_F(ShippedTemplate, ANullConfigTemplateIsNoTemplate) {
  set_config_template("null");
  EXPECT_TRUE(find_shipped_chat_templates(dir_).empty());
}

TEST_F(ShippedTemplate, InputInTheMessageIsEscaped) {
  set_config_template(R"([{"name": "\u001b[31mred", "template": "a"}])");
  EXPECT_THAT(refusal(), AllOf(HasSubstr("`\\x1b[31mred`"), Not(HasSubstr("\x1b"))));
}

// The GLM-5 template shipped in a model directory, rendered by the engine,
// equals the built-in renderer on every GLM-5 row of renders.jsonl, in text
// and in the tokens of the marked prompt. No package ships that template, so
// it runs where $GLMRT_GLM5_CHAT_TEMPLATE names a copy (sha256 in
// tests/fixtures/chat_templates/README.md).
TEST_F(ShippedTemplate, TheShippedGlm5TemplateEqualsTheBuiltInRenderer) {
  const char* file = std::getenv("GLMRT_GLM5_CHAT_TEMPLATE");
  if (!file) GTEST_SKIP() << "set GLMRT_GLM5_CHAT_TEMPLATE to the GLM-5 chat template";
  const std::string text = read(file);
  ASSERT_FALSE(text.empty());
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_fixture("glm_tiny/tokenizer.json"));
  for (const bool crlf : {false, true}) {
    std::string source;
    for (char c : text) source += c == '\n' && crlf ? std::string("\r\n") : std::string(1, c);
    write(dir_ / "chat_template.jinja", source);
    const auto shipped = ModelChatTemplate::for_model(dir_);
    int rows = 0;
    for (const auto& row : testing::read_json_lines(tokenizer_fixture("chat/renders.jsonl"))) {
      if (row["template"] != "glm-5.3-flash") continue;
      nlohmann::ordered_json kwargs = row["options"];
      nlohmann::ordered_json request = {{"messages", row["messages"]}};
      if (kwargs.contains("tools")) request["tools"] = kwargs["tools"], kwargs.erase("tools");
      request["chat_template_kwargs"] = kwargs;
      const RenderedChat engine = shipped.render_marked(request);
      const RenderedChat builtin = render_glm5_chat_marked(request);
      EXPECT_EQ(engine.text, builtin.text) << row["conversation"];
      EXPECT_EQ(encode_chat_prompt(tokenizer, engine), encode_chat_prompt(tokenizer, builtin))
          << row["conversation"];
      ++rows;
    }
    EXPECT_EQ(rows, 23);
  }
}

}  // namespace
}  // namespace glmrt::text
