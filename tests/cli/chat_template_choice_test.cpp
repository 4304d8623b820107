// Every command that renders chat prompts renders a model's own chat template
// with the Jinja2 engine, and refuses one that does not parse before the
// model loads, naming the file and line; --chat-template builtin (or the
// profile's `chat_template: builtin`) renders with the built-in one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "glmrt_process.h"

namespace glmrt::test {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

// glm_tiny (without its oracle file) plus a chat template of its own.
class ModelWithOwnTemplate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("glmrt-own-template-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    model_ = dir_ / "model";
    fs::create_directories(model_);
    for (const auto& entry : fs::directory_iterator(tiny_model()))
      if (entry.path().filename() != "ref.json")
        fs::copy_file(entry.path(), model_ / entry.path().filename());
    std::ofstream(model_ / "chat_template.jinja")
        << "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}\n";
    request_ = (dir_ / "request.json").string();
    std::ofstream(request_) << R"({"messages": [{"role": "user", "content": "hi"}]})";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A template that does not parse (its `{% if %}` is never closed).
  void break_template() {
    std::ofstream(model_ / "chat_template.jinja") << "<s>\n{% if messages %}{{ messages }}\n";
  }

  void expect_refused(const ProcessResult& r, const std::string& command) {
    EXPECT_EQ(r.exit_status, 1) << command << ": " << r.err;
    EXPECT_THAT(r.err, AllOf(HasSubstr((model_ / "chat_template.jinja").string() + ":2: "),
                             HasSubstr("{% if %}: is not closed")))
        << command;
    EXPECT_EQ(r.out, "") << command;
  }

  fs::path dir_, model_;
  std::string request_;
};

TEST_F(ModelWithOwnTemplate, TemplateRendersItUnlessTheBuiltInOneIsChosen) {
  const ProcessResult own =
      run_glmrt({"template", "--model", model_.string(), "--request", request_});
  EXPECT_EQ(own.exit_status, 0) << own.err;
  EXPECT_EQ(own.out, "<user>hi");
  const ProcessResult builtin = run_glmrt({"template", "--model", model_.string(), "--request",
                                           request_, "--chat-template", "builtin"});
  const ProcessResult original =
      run_glmrt({"template", "--model", tiny_model(), "--request", request_});
  EXPECT_EQ(builtin.exit_status, 0) << builtin.err;
  EXPECT_EQ(original.exit_status, 0) << original.err;
  EXPECT_EQ(builtin.out, original.out);
  const ProcessResult bad = run_glmrt(
      {"template", "--model", model_.string(), "--request", request_, "--chat-template", "jinja"});
  EXPECT_EQ(bad.exit_status, 1);
  EXPECT_THAT(bad.err, HasSubstr("--chat-template: `jinja` is not one of model, builtin"));
  break_template();
  expect_refused(run_glmrt({"template", "--model", model_.string(), "--request", request_}),
                 "template");
}

TEST_F(ModelWithOwnTemplate, RunChatAndServeRefuseABrokenOneBeforeTheModelLoads) {
  const std::vector<std::string> model = {"--profile", reference_profile(), "--model",
                                          model_.string()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 1, model.begin(), model.end());
    return args;
  };
  const ProcessResult own = run_glmrt(with({"run", "--chat", "--prompt", "hi", "-n", "1"}));
  EXPECT_EQ(own.exit_status, 0) << own.err;
  break_template();
  expect_refused(run_glmrt(with({"run", "--chat", "--prompt", "hi", "-n", "1"})), "run --chat");
  expect_refused(run_glmrt(with({"chat", "-n", "1"}), Stdout::captured, "hi\n"), "chat");
  expect_refused(run_glmrt(with({"serve", "--port", "0"})), "serve");
  // A raw prompt renders no template.
  EXPECT_EQ(run_glmrt(with({"run", "--prompt", "hi", "-n", "1"})).exit_status, 0);
  const ProcessResult builtin =
      run_glmrt(with({"run", "--chat", "--prompt", "hi", "-n", "1", "--chat-template", "builtin"}));
  EXPECT_EQ(builtin.exit_status, 0) << builtin.err;
}

TEST_F(ModelWithOwnTemplate, TheProfileCanChooseTheBuiltInOne) {
  break_template();
  const fs::path profile = dir_ / "builtin.yaml";
  {
    std::ifstream in(reference_profile());
    std::ofstream out(profile);
    out << in.rdbuf() << "chat_template: builtin\n";
  }
  const std::vector<std::string> args = {
      "run", "--profile", profile.string(), "--model", model_.string(), "--chat", "--prompt", "hi",
      "-n",  "1"};
  const ProcessResult r = run_glmrt(args);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  // The command line wins over the profile.
  std::vector<std::string> model_choice = args;
  model_choice.insert(model_choice.end(), {"--chat-template", "model"});
  expect_refused(run_glmrt(model_choice), "run --chat-template model");
}

}  // namespace
}  // namespace glmrt::test
