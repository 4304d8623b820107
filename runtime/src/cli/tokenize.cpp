// glmrt tokenize: text on stdin -> JSON array of ids (or ids -> text with --decode).
#include "commands.h"
#include "options.h"
#include "output_error.h"

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/gguf_tokenizer.h>
#include <glmrt/text/text_commands.h>
#include <glmrt/text/tokenizer.h>

#include <boost/program_options.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

namespace glmrt::cli {

int tokenize_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("glmrt tokenize --tokenizer FILE [--special] [--decode] < input");
  std::string tokenizer_path;
  options.add_options()("help,h", "show this help")(
      "tokenizer", po::value(&tokenizer_path)->required(),
      "tokenizer.json, or a GGUF file (its tokenizer.ggml.* keys)")(
      "special", "add special tokens (the post_processor), as add_special_tokens=true")(
      "decode", "read a JSON array of ids and print the decoded text");
  const auto parsed = parse_options(args, options);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  const auto tokenizer =
      std::filesystem::path(tokenizer_path).extension() == ".gguf"
          ? gguf::tokenizer_from_gguf(gguf::Model::open(tokenizer_path).metadata())
          : text::Tokenizer::from_file(tokenizer_path);
  // Text may hold any byte; the ids to decode are JSON, where a NUL would end
  // the parse early.
  constexpr InputKind kIds{"the token ids (a JSON array)", 256 * kInputMiB};
  const std::string input = read_input_stream(
      STDIN_FILENO, "stdin", vm.count("decode") ? kIds : input_kinds::text_to_tokenize);
  const std::string output =
      vm.count("decode") ? text::decode_json_ids(tokenizer, input)
                         : text::tokenize_to_json(tokenizer, input, vm.count("special") > 0) + "\n";
  write_output(stdout, output, vm.count("decode") ? "the decoded text" : "the token ids");
  flush_output(stdout, vm.count("decode") ? "the decoded text" : "the token ids");
  return 0;
}

}  // namespace glmrt::cli
