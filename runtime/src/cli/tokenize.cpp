// glmrt tokenize: text on stdin -> JSON array of ids (or ids -> text with --decode).
#include "commands.h"
#include "options.h"
#include "output_error.h"

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/gguf_tokenizer.h>
#include <glmrt/text/chunked_encoder.h>
#include <glmrt/text/text_commands.h>
#include <glmrt/text/tokenizer.h>

#include <boost/program_options.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::cli {
namespace {

// Standard input a chunk at a time, its ids printed as they come (the JSON
// array of encoding it whole): memory stays a few chunks, whatever the text.
void stream_token_ids(const text::Tokenizer& tokenizer, bool add_special_tokens) {
  constexpr std::string_view kWhat = "the token ids";
  InputReader input = InputReader::stream(STDIN_FILENO, "stdin", input_kinds::text_to_tokenize);
  text::ChunkedEncoder encoder(tokenizer, add_special_tokens);
  std::vector<text::TokenId> ids;
  std::string json = "[";
  bool first = true;
  const auto print = [&] {
    for (const text::TokenId id : ids) {
      if (!first) json += ',';
      first = false;
      json += std::to_string(id);
    }
    ids.clear();
    write_output(stdout, json, kWhat);
    json.clear();
  };
  for (std::string_view bytes; !(bytes = input.next(1 << 16)).empty();) {
    encoder.push(bytes, ids);
    if (!ids.empty()) print();
  }
  encoder.finish(ids);
  print();
  write_output(stdout, "]\n", kWhat);
  flush_output(stdout, kWhat);
}

}  // namespace

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
  if (!vm.count("decode")) {
    stream_token_ids(tokenizer, vm.count("special") > 0);
    return 0;
  }
  // The ids to decode are JSON, where a NUL would end the parse early.
  constexpr InputKind kIds{"the token ids (a JSON array)", 256 * kInputMiB};
  const std::string input = read_input_stream(STDIN_FILENO, "stdin", kIds);
  write_output(stdout, text::decode_json_ids(tokenizer, input), "the decoded text");
  flush_output(stdout, "the decoded text");
  return 0;
}

}  // namespace glmrt::cli
