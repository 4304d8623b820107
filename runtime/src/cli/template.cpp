// glmrt template: the prompt a chat request renders to, for a model directory.
#include "commands.h"
#include "options.h"

#include <glmrt/base/error.h>
#include <glmrt/text/text_commands.h>

#include <boost/program_options.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace glmrt::cli {

int template_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("glmrt template --model DIR --request FILE.json");
  std::string model_dir, request_path;
  options.add_options()("help,h", "show this help")("model", po::value(&model_dir)->required(),
                                                    "model directory (config.json)")(
      "request", po::value(&request_path)->required(),
      "OpenAI-style chat request body (messages, tools, chat_template_kwargs)");
  if (!parse_options(args, options)) return 0;
  std::ifstream in(request_path, std::ios::binary);
  if (!in) fail("{}: cannot open the request file", request_path);
  std::ostringstream body;
  body << in.rdbuf();
  const std::string prompt = text::render_request_for_model(model_dir, body.str(), request_path);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace glmrt::cli
