// glmrt chat: an interactive conversation on stdin/stdout. Every turn renders
// the whole conversation with the model's chat template and hands the tokens
// to Session::set_context, which keeps the cached common prefix and prefills
// only from where the new prompt diverges.
#include "answer_summary.h"
#include "chat_flags.h"
#include "chat_input.h"
#include "commands.h"
#include "generation_report.h"
#include "output_error.h"
#include "sampling_flags.h"
#include "sigint_scope.h"
#include "text_stream.h"
#include "thinking_view.h"

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
#include <unistd.h>
#include <boost/program_options.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <optional>

namespace glmrt::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kHelp =
    "commands:\n"
    "  /reset  forget the conversation and empty the cache\n"
    "  /more   continue an answer cut off by the token limit or Ctrl-C\n"
    "  /stats  the last answer's full report (speed, expert cache, reads, memory)\n"
    "  /help   this list\n"
    "  /quit   leave (so do end of input and Ctrl-C at the prompt)\n"
    "A line ending in \\ goes on on the next line; a line of \"\"\" opens a block of\n"
    "lines that another such line closes; pasted lines are one message.\n"
    "On a terminal the arrows edit the line and Up / Down recall earlier messages.\n"
    "Ctrl-C while an answer is printed stops that answer.\n";

class ChatLoop {
 public:
  ChatLoop(Engine& engine, text::ModelChatTemplate chat_template, text::Tokenizer tokenizer,
           const std::vector<int32_t>& stops, const SamplingParams& sampling, ChatOptions options,
           bool full_reports, const std::atomic<bool>& interrupted)
      : engine_(engine),
        chat_template_(chat_template),
        tokenizer_(std::move(tokenizer)),
        session_(engine),
        sampler_(sampling),
        max_new_tokens_(sampling.max_new_tokens),
        stop_tokens_(with_role_tokens(stops, tokenizer_)),
        conversation_(std::move(options)),
        full_reports_(full_reports),
        interrupted_(interrupted),
        dim_(ThinkingView::dim_for(stdout)),
        think_open_(text::special_token_ids(tokenizer_, std::array{std::string_view("<think>")})),
        think_close_(
            text::special_token_ids(tokenizer_, std::array{std::string_view("</think>")})) {}

  /// Handles one input line; false when the user asked to leave.
  bool handle(const std::string& line) {
    if (line.empty()) return true;
    if (line == "/quit" || line == "/exit") return false;
    if (line == "/help") {
      std::fputs(kHelp, stderr);
    } else if (line == "/reset") {
      reset();
    } else if (line == "/stats") {
      print_last_report();
    } else if (line == "/more") {
      more();
    } else if (line.starts_with('/') && line.find(' ') == std::string::npos) {
      fmt::print(stderr, "unknown command `{}` (/help lists them)\n", line);
    } else {
      user_turn(line);
    }
    return true;
  }

 private:
  void user_turn(const std::string& text) {
    Conversation next = conversation_;
    next.add_user(text);
    const auto ids = next.encode(chat_template_, tokenizer_);
    std::vector<int32_t> prompt(ids.begin(), ids.end());
    const Generation generation = answer(prompt);
    conversation_ = std::move(next);
    prompt_ = std::move(prompt);
    answer_ = generation.tokens;
    conversation_.add_assistant(answer_text(tokenizer_, answer_));
    finish_turn(generation);
  }

  void more() {
    if (conversation_.empty() || prompt_.empty()) {
      std::fputs("nothing to continue: ask something first\n", stderr);
      return;
    }
    if (last_reason_ == StopReason::eos) {
      std::fputs("the last answer is complete (the model ended it)\n", stderr);
      return;
    }
    // Continue token by token: the cache holds prompt + answer already, so
    // this prefills at most the answer's last token.
    std::vector<int32_t> context = prompt_;
    context.insert(context.end(), answer_.begin(), answer_.end());
    const Generation generation = answer(context);
    answer_.insert(answer_.end(), generation.tokens.begin(), generation.tokens.end());
    conversation_.replace_last_assistant(answer_text(tokenizer_, answer_));
    finish_turn(generation);
  }

  Generation answer(std::span<const int32_t> prompt) {
    before_ = session_.stats();
    experts_before_ = engine_.experts().stats();
    if (const Speculator* speculator = session_.speculator()) draft_before_ = speculator->stats();
    ThinkingView view(stdout, dim_, in_reasoning(prompt));
    TextStream stream(tokenizer_, [&view](const std::string& piece) { view.push(piece); });
    const Generation generation =
        generate(session_, sampler_, prompt, {max_new_tokens_, stop_tokens_}, [&](int32_t token) {
          stream.push(token);
          return !interrupted_.load();
        });
    stream.finish();
    view.finish();
    write_output(stdout, "\n", "the answer");
    flush_output(stdout, "the answer");
    return generation;
  }

  /// Whether `context` ends inside reasoning: its last <think> comes after
  /// its last </think> (the prompt opened it, or /more continues in it).
  bool in_reasoning(std::span<const int32_t> context) const {
    auto last = [&](const std::vector<text::TokenId>& ids) {
      for (size_t i = context.size(); i-- > 0;)
        if (std::find(ids.begin(), ids.end(), static_cast<text::TokenId>(context[i])) != ids.end())
          return static_cast<ptrdiff_t>(i);
      return ptrdiff_t{-1};
    };
    const ptrdiff_t open = last(think_open_);
    return open >= 0 && open > last(think_close_);
  }

  void finish_turn(const Generation& generation) {
    last_reason_ = generation.reason;
    if (generation.reason != StopReason::eos)
      fmt::print(stderr, "[answer stopped: {}; /more continues it]\n",
                 to_string(generation.reason));
    LastAnswer& last = last_answer_.emplace();
    last.session = session_stats_since(session_.stats(), before_);
    last.experts = expert_stats_since(engine_.experts().stats(), experts_before_);
    if (const Speculator* speculator = session_.speculator())
      last.draft = draft_stats_since(speculator->stats(), draft_before_);
    if (full_reports_)
      print_report(last);
    else
      fmt::print(stderr, "{}\n",
                 answer_summary(generation.tokens.size(), last.session, last.experts));
    std::fflush(stderr);
  }

  struct LastAnswer {
    SessionStats session;
    ExpertStoreStats experts;
    std::optional<DraftStats> draft;  // when the session drafts
  };

  void print_report(const LastAnswer& last) {
    print_generation_report(stderr, last.session, last.experts, engine_);
    if (last.draft) print_draft_report(stderr, *last.draft);
  }

  void reset() {
    conversation_.clear();
    session_.reset();
    prompt_.clear();
    answer_.clear();
    std::fputs("(conversation cleared)\n", stderr);
  }

  void print_last_report() {
    fmt::print(stderr, "conversation: {} messages, {} tokens cached (max_context {})\n",
               conversation_.size(), session_.tokens().size(), engine_.profile().max_context);
    if (!last_answer_) {
      std::fputs("no answer yet: /stats reports the last one\n", stderr);
      return;
    }
    std::fputs("the last answer:\n", stderr);
    print_report(*last_answer_);
  }

  Engine& engine_;
  const text::ModelChatTemplate chat_template_;
  text::Tokenizer tokenizer_;
  Session session_;
  Sampler sampler_;
  int max_new_tokens_;
  std::vector<int32_t> stop_tokens_;
  Conversation conversation_;
  const bool full_reports_;  // --stats: the full report after every answer
  const std::atomic<bool>& interrupted_;
  const bool dim_;  // reasoning in the terminal's faint style
  const std::vector<text::TokenId> think_open_, think_close_;
  std::vector<int32_t> prompt_;  // the last turn's prompt
  std::vector<int32_t> answer_;  // its answer so far (grows with /more)
  StopReason last_reason_ = StopReason::eos;
  SessionStats before_;
  ExpertStoreStats experts_before_;
  DraftStats draft_before_;
  std::optional<LastAnswer> last_answer_;  // what /stats reports
};

}  // namespace

int chat_command(const Args& args, const Ranks& ranks) {
  po::options_description options("glmrt chat --profile P [--model DIR] [flags]");
  std::string profile_path, model_dir;
  options.add_options()("help,h", "show this help")("profile", po::value(&profile_path)->required(),
                                                    "profile YAML")("model", po::value(&model_dir),
                                                                    kModelHelp)(
      "stats", "the full report after every answer (default: one line; /stats shows it)")(
      "history-file", po::value<std::string>(),
      "where a terminal's messages are kept for Up / Down across sessions (default "
      "$XDG_STATE_HOME/glmrt/chat_history, ~/.local/state/glmrt/chat_history without it; "
      "\"\" keeps none)");
  options.add(sampling_flags()).add(chat_flags()).add(chat_template_flag());
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) {
    std::cout << options << '\n' << kHelp;
    return 0;
  }
  po::notify(vm);
  check_sampling_flags(vm);
  ChatOptions chat_options = chat_options_from(vm);

  const Profile profile = load_profile(profile_path);
  // Before the model loads, which may take minutes.
  const ModelText model_text = ModelText::open(Engine::model_dir_for(profile, model_dir));
  text::Tokenizer tokenizer = model_text.tokenizer();
  const auto chat_template =
      model_text.chat_template(chat_template_choice(vm, profile.chat_template));
  auto engine = ranks.open(profile, model_dir);
  const auto shards = ranks.spread(*engine);
  const SamplingParams sampling =
      apply_sampling_flags(resolve_sampling(engine->model_dir(), profile), vm);
  std::atomic<bool> interrupted{false};
  ChatLoop chat(*engine, chat_template, std::move(tokenizer),
                model_text.stop_ids(engine->model().config()), sampling, std::move(chat_options),
                vm.count("stats") > 0, interrupted);

  const bool interactive = isatty(STDIN_FILENO) != 0;
  if (interactive)
    fmt::print(stderr, "glmrt chat: {} (/help lists the commands)\n", engine->model_dir());
  SigintScope sigint(interrupted);
  ChatInput input(interrupted, interactive,
                  vm.count("history-file")
                      ? std::filesystem::path(vm["history-file"].as<std::string>())
                      : LineEditor::default_history_file());
  std::string line;
  for (;;) {
    interrupted.store(false);  // a Ctrl-C that stopped an answer is spent
    const LineStatus status = input.read(line);
    if (status != LineStatus::line) {
      if (interactive) std::fputs("\n", stderr);
      return 0;
    }
    try {
      if (!chat.handle(line)) return 0;
    } catch (const Error& e) {
      // The turn is dropped; the conversation and cache stay usable.
      fmt::print(stderr, "glmrt: error: {}\n", e.what());
    }
  }
}

}  // namespace glmrt::cli
