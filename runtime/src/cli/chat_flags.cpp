#include "chat_flags.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include <string>

namespace glmrt::cli {

namespace po = boost::program_options;

po::options_description chat_flags() {
  po::options_description flags("chat template");
  flags.add_options()("no-thinking", "answer directly (enable_thinking = false)")(
      "reasoning-effort", po::value<std::string>(), "low | high | max (default max)")(
      "clear-thinking", "leave earlier answers' reasoning out of the prompt")(
      "system", po::value<std::string>(), "a system message before the conversation");
  return flags;
}

ChatOptions chat_options_from(const po::variables_map& vm) {
  ChatOptions options;
  options.enable_thinking = vm.count("no-thinking") == 0;
  options.clear_thinking = vm.count("clear-thinking") > 0;
  if (vm.count("reasoning-effort")) {
    const auto effort = vm["reasoning-effort"].as<std::string>();
    if (effort != "low" && effort != "high" && effort != "max")
      fail("--reasoning-effort: `{}` is not one of low, high, max", printable(effort, 64));
    if (effort != "max") options.reasoning_effort = effort;
  }
  if (vm.count("system")) options.system = vm["system"].as<std::string>();
  return options;
}

po::options_description chat_template_flag() {
  po::options_description flag("chat template choice");
  flag.add_options()("chat-template", po::value<std::string>(),
                     "model (default): the model's own template (the built-in GLM-5 one when it "
                     "ships none) | builtin: the built-in GLM-5 template whatever it ships");
  return flag;
}

text::ChatTemplateChoice chat_template_choice(const po::variables_map& vm,
                                              text::ChatTemplateChoice fallback) {
  if (!vm.count("chat-template")) return fallback;
  const auto name = vm["chat-template"].as<std::string>();
  if (const auto choice = text::chat_template_choice_named(name)) return *choice;
  fail("--chat-template: `{}` is not one of model, builtin", printable(name, 64));
}

}  // namespace glmrt::cli
