// A model directory's own chat template: found where transformers looks for
// it, and refused (naming the file and key) unless it is a template the
// built-in renderer reproduces or the caller chose the built-in one.
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
      ModelChatTemplate::for_model(dir_);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "the model's template was accepted";
    return {};
  }

  fs::path dir_;
};

TEST_F(ShippedTemplate, NoTemplateMeansTheBuiltInOne) {
  EXPECT_TRUE(find_shipped_chat_templates(dir_).empty());
  EXPECT_EQ(ModelChatTemplate::for_model(dir_).render(kRequest), render_glm5_chat(kRequest));
}

TEST_F(ShippedTemplate, ADifferentJinjaFileIsRefusedNamingIt) {
  write(dir_ / "chat_template.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}\n");
  EXPECT_THAT(refusal(),
              AllOf(HasSubstr((dir_ / "chat_template.jinja").string() + ": "),
                    HasSubstr("not one glmrt renders"), HasSubstr("--chat-template builtin")));
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
  EXPECT_THAT(refusal(), HasSubstr("chat_template.jinja: "));
}

TEST_F(ShippedTemplate, AToolUseTemplateFileIsCheckedToo) {
  write(dir_ / "additional_chat_templates" / "tool_use.jinja", "{{ tools }}");
  EXPECT_THAT(refusal(), HasSubstr((dir_ / "additional_chat_templates/tool_use.jinja").string()));
}

TEST_F(ShippedTemplate, ADifferentConfigTemplateIsRefusedNamingTheKey) {
  set_config_template(R"("{{ messages }}")");
  EXPECT_THAT(refusal(), AllOf(HasSubstr("tokenizer_config.json: key `chat_template`: "),
                               HasSubstr("--chat-template builtin")));
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
  EXPECT_THAT(refusal(), HasSubstr("(the entry named `default`)"));
}

TEST_F(ShippedTemplate, MalformedConfigTemplatesAreClearErrors) {
  set_config_template(R"([{"name": "rag", "template": "a"}])");
  EXPECT_THAT(refusal(), AllOf(HasSubstr("key `chat_template`: lists templates named `rag` but "
                                         "none named `default`"),
                               HasSubstr("--chat-template builtin")));
  set_config_template(R"([{"name": "default"}])");
  EXPECT_THAT(refusal(), HasSubstr("key `chat_template`[0]: expected an object"));
  set_config_template("42");
  EXPECT_THAT(refusal(), HasSubstr("expected a string or a list"));
  write(dir_ / "tokenizer_config.json", "{");
  EXPECT_THAT(refusal(), HasSubstr("tokenizer_config.json: not a JSON object"));
  // The built-in template reads none of it.
  EXPECT_NO_THROW(ModelChatTemplate::for_model(dir_, ChatTemplateChoice::builtin));
}

TEST_F(ShippedTemplate, ANullConfigTemplateIsNoTemplate) {
  set_config_template("null");
  EXPECT_TRUE(find_shipped_chat_templates(dir_).empty());
}

TEST_F(ShippedTemplate, InputInTheMessageIsEscaped) {
  set_config_template(R"([{"name": "\u001b[31mred", "template": "a"}])");
  EXPECT_THAT(refusal(), AllOf(HasSubstr("`\\x1b[31mred`"), Not(HasSubstr("\x1b"))));
}

// Jinja2 (as transformers runs it) reads every line break as "\n" and drops
// one final newline; nothing else is the same template.
TEST(CanonicalTemplateHash, OnlyLineBreakFormsAndOneFinalNewlineAreTrivia) {
  const std::string base = canonical_template_sha256("a\n{{ b }}\n");
  EXPECT_EQ(canonical_template_sha256("a\r\n{{ b }}\r\n"), base);
  EXPECT_EQ(canonical_template_sha256("a\r{{ b }}"), base);
  EXPECT_EQ(canonical_template_sha256("a\n{{ b }}"), base);
  EXPECT_NE(canonical_template_sha256("a\n{{ b }}\n\n"), base);
  EXPECT_NE(canonical_template_sha256("a \n{{ b }}\n"), base);
  EXPECT_NE(canonical_template_sha256("a\n{{b}}\n"), base);
  EXPECT_EQ(canonical_template_sha256(""),  // sha256("\n")
            "01ba4719c80b6fe911b091a7c05124b64eeece964e09c058ef8f9805daca546b");
}

// The accepted hashes are those of the templates the fixture's renders were
// made from (its README's provenance table), the renders
// chat_template_test.cpp holds the built-in renderer to.
TEST(CanonicalTemplateHash, AcceptedHashesAreThoseOfTheTestedRenders) {
  const std::string readme = read(tokenizer_fixture("README.md"));
  const size_t row = readme.find("| glm-5.3-flash | ");
  ASSERT_NE(row, std::string::npos);
  const std::string line = readme.substr(row, readme.find('\n', row) - row);
  const auto hashes = builtin_glm5_template_hashes();
  ASSERT_EQ(hashes.size(), 1u);
  EXPECT_THAT(line, HasSubstr(std::string(hashes[0]) + " |"));
}

// The real file is third-party text the repository does not ship: point
// GLMRT_GLM5_CHAT_TEMPLATE at a copy of it (README's provenance table) to run
// this check.
TEST_F(ShippedTemplate, TheShippedGlm5TemplateIsAccepted) {
  const char* real = std::getenv("GLMRT_GLM5_CHAT_TEMPLATE");
  if (!real) GTEST_SKIP() << "GLMRT_GLM5_CHAT_TEMPLATE is not set";
  const std::string text = read(real);
  write(dir_ / "chat_template.jinja", text);
  EXPECT_EQ(ModelChatTemplate::for_model(dir_).render(kRequest), render_glm5_chat(kRequest));
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  write(dir_ / "chat_template.jinja", crlf);
  EXPECT_NO_THROW(ModelChatTemplate::for_model(dir_));
  fs::remove(dir_ / "chat_template.jinja");
  set_config_template(nlohmann::json(text).dump());
  EXPECT_NO_THROW(ModelChatTemplate::for_model(dir_));
}

}  // namespace
}  // namespace glmrt::text
