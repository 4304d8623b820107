// glmrt run: generate a continuation of a prompt given as text (streamed back
// as text) or as token ids (answered with ids).
#include "chat_flags.h"
#include "commands.h"
#include "generation_report.h"
#include "options.h"
#include "output_error.h"
#include "sampling_flags.h"
#include "text_stream.h"
#include "token_id_list.h"

#include <glmrt/base/error.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/conversation.h>
#include <glmrt/generate/generator.h>
#include <glmrt/generate/model_text.h>
#include <glmrt/generate/session.h>
#include <glmrt/generate/speculator.h>
#include <glmrt/generate/stop_tokens.h>
#include <glmrt/text/tokenizer.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include <iostream>
#include <optional>

namespace glmrt::cli {
namespace {

namespace po = boost::program_options;

// A chat prompt: the template and the options it is rendered with.
struct ChatPrompt {
  ChatOptions options;
  text::ModelChatTemplate chat_template;
};

// --prompt: the text (raw, or wrapped as one user turn with --chat) encoded
// with the model's tokenizer. A raw prompt gets the tokenizer's special
// tokens as transformers' tokenizer(text) does; a chat prompt already has them.

std::vector<int32_t> encode_prompt(const text::Tokenizer& tokenizer, const std::string& prompt,
                                   const std::optional<ChatPrompt>& chat) {
  std::vector<text::TokenId> ids;
  if (chat) {
    Conversation conversation(chat->options);
    conversation.add_user(prompt);
    ids = conversation.encode(chat->chat_template, tokenizer);
  } else {
    ids = tokenizer.encode(prompt, true);
  }
  if (ids.empty()) fail("--prompt: the text encodes to no tokens (give a non-empty prompt)");
  return {ids.begin(), ids.end()};
}

}  // namespace

int run_command(const Args& args, const Ranks& ranks) {
  po::options_description options(
      "glmrt run --profile P [--model MODEL] (--prompt TEXT | --prompt-ids IDS) [-n N]");
  std::string profile_path, model_dir;
  options.add_options()("help,h", "show this help")("profile", po::value(&profile_path)->required(),
                                                    "profile YAML")("model", po::value(&model_dir),
                                                                    kModelHelp)(
      "prompt", po::value<std::string>(), "prompt text; the continuation is streamed as text")(
      "prompt-ids", po::value<std::string>(), "prompt as comma-separated token ids; prints ids")(
      "chat", "wrap --prompt in the chat template as one user turn")(
      "ignore-eos", "do not stop at end-of-sequence tokens")(
      "verify",
      "check the container's files against its checksums.json before loading "
      "(memory.verify_checksums)")(
      "record-routing", po::value<std::string>(),
      "write every MoE step's routed experts to FILE (a trace for `glmrt stats --replay`)")(
      "force", "let --record-routing replace an existing file that is not a routing trace");
  options.add(sampling_flags()).add(chat_flags()).add(chat_template_flag());
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) {
    std::cout << options << '\n';
    return 0;
  }
  po::notify(vm);
  if (vm.count("prompt") == vm.count("prompt-ids"))
    fail("run: give exactly one of --prompt TEXT or --prompt-ids IDS");
  if (vm.count("chat") && !vm.count("prompt")) fail("run: --chat needs --prompt TEXT");
  if (vm.count("chat-template") && !vm.count("chat"))
    fail("run: --chat-template applies to --chat prompts only");
  // The chat template's settings shape a --chat prompt only.
  for (const char* flag : {"system", "no-thinking", "clear-thinking", "reasoning-effort"})
    require_with(vm, "run", flag, "chat");
  check_sampling_flags(vm);
  // Checked before the model loads, which may take minutes.
  std::vector<int32_t> prompt_ids;
  if (vm.count("prompt-ids"))
    prompt_ids = parse_token_id_list(vm["prompt-ids"].as<std::string>(), "--prompt-ids");
  std::optional<ChatOptions> chat_options;
  if (vm.count("chat")) chat_options = chat_options_from(vm);

  Profile profile = load_profile(profile_path);
  if (vm.count("verify")) profile.verify_checksums = true;
  const ModelText model_text = ModelText::open(Engine::model_dir_for(profile, model_dir));
  // The text side before the model loads, which may take minutes.
  std::optional<text::Tokenizer> tokenizer;
  if (vm.count("prompt")) tokenizer = model_text.tokenizer();
  std::optional<ChatPrompt> chat;
  if (chat_options)
    chat = ChatPrompt{*chat_options,
                      model_text.chat_template(chat_template_choice(vm, profile.chat_template))};
  auto engine = ranks.open(profile, model_dir);
  const auto shards = ranks.spread(*engine);
  if (vm.count("record-routing"))
    engine->record_routing(vm["record-routing"].as<std::string>(), vm.count("force") > 0);
  const SamplingParams sampling =
      apply_sampling_flags(resolve_sampling(engine->model_dir(), profile), vm);
  Sampler sampler(sampling);
  std::vector<int32_t> stop;
  if (!vm.count("ignore-eos")) stop = model_text.stop_ids(engine->model().config());
  const GenerationLimits limits{sampling.max_new_tokens, stop};
  Session session(*engine);

  Generation generation;
  if (vm.count("prompt-ids")) {
    generation = generate(session, sampler, prompt_ids, limits);
    write_output(stdout, fmt::format("{}\n", fmt::join(generation.tokens, ",")),
                 "the generated token ids");
  } else {
    const auto prompt = encode_prompt(*tokenizer, vm["prompt"].as<std::string>(), chat);
    // A chat answer ends its turn at a role token, as the template's turns do.
    const std::vector<int32_t> chat_stop =
        chat && !vm.count("ignore-eos") ? with_role_tokens(stop, *tokenizer) : stop;
    TextStream stream(*tokenizer, stdout);
    generation =
        generate(session, sampler, prompt, {limits.max_new_tokens, chat_stop}, [&](int32_t token) {
          stream.push(token);
          return true;
        });
    stream.finish();
    write_output(stdout, "\n", "the generated text");
  }
  flush_output(stdout, "the generated output");
  engine->finish_routing_trace();
  fmt::print(stderr, "stopped: {} ({} tokens)\n", to_string(generation.reason),
             generation.tokens.size());
  print_generation_report(stderr, session.stats(), *engine);
  print_rank_report(stderr, *engine, shards.get());
  if (const Speculator* speculator = session.speculator())
    print_draft_report(stderr, speculator->stats());
  print_load_report(stderr, *engine);
  return 0;
}

}  // namespace glmrt::cli
