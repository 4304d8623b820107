// glmrt tokenize: text on stdin -> JSON array of ids (or ids -> text with --decode).
#include "commands.h"
#include "options.h"
#include "output_error.h"

#include <glmrt/base/error.h>
#include <glmrt/text/text_commands.h>
#include <glmrt/text/tokenizer.h>

#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <string>

namespace glmrt::cli {

namespace {

// All of stdin, byte for byte (no newline translation or stripping).
std::string read_all_stdin() {
  std::string data;
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) data.append(buffer, n);
  if (std::ferror(stdin)) fail("tokenize: cannot read stdin");
  return data;
}

}  // namespace

int tokenize_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("glmrt tokenize --tokenizer FILE [--special] [--decode] < input");
  std::string tokenizer_path;
  options.add_options()("help,h", "show this help")(
      "tokenizer", po::value(&tokenizer_path)->required(), "tokenizer.json")(
      "special", "add special tokens (the post_processor), as add_special_tokens=true")(
      "decode", "read a JSON array of ids and print the decoded text");
  const auto parsed = parse_options(args, options);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const auto tokenizer = text::Tokenizer::from_file(tokenizer_path);
  const std::string input = read_all_stdin();
  const std::string output =
      vm.count("decode") ? text::decode_json_ids(tokenizer, input)
                         : text::tokenize_to_json(tokenizer, input, vm.count("special") > 0) + "\n";
  write_output(stdout, output, vm.count("decode") ? "the decoded text" : "the token ids");
  flush_output(stdout, vm.count("decode") ? "the decoded text" : "the token ids");
  return 0;
}

}  // namespace glmrt::cli
