// glmrt template: the prompt a chat request renders to, for a model directory.
#include "chat_flags.h"
#include "commands.h"
#include "options.h"
#include "output_error.h"

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/generate/model_text.h>
#include <glmrt/text/text_commands.h>

#include <boost/program_options.hpp>

#include <cstdio>

namespace glmrt::cli {

int template_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("glmrt template --model MODEL --request FILE.json");
  std::string model_dir, request_path;
  options.add_options()("help,h", "show this help")(
      "model", po::value(&model_dir)->required(),
      "the model (a folder or a GGUF file) whose chat template renders")(
      "request", po::value(&request_path)->required(),
      "OpenAI-style chat request body (messages, tools, chat_template_kwargs)");
  options.add(chat_template_flag());
  const auto vm = parse_options(args, options);
  if (!vm) return 0;
  const auto chat_template = ModelText::open(model_dir).chat_template(
      chat_template_choice(*vm, text::ChatTemplateChoice::model));
  const std::string body = read_input_file(request_path, input_kinds::chat_request);
  const std::string prompt = text::render_request(chat_template, body, printable(request_path));
  write_output(stdout, prompt, "the prompt");
  flush_output(stdout, "the prompt");
  return 0;
}

}  // namespace glmrt::cli
