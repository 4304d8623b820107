// glmrt score: log-likelihoods for evaluation harnesses (the seed program's
// SCORE mode) and the perplexity of a text file. Scores come from
// SequenceScorer, the code /v1/completions uses for echo + logprobs, so both
// report the same numbers.
#include "commands.h"
#include "options.h"
#include "text_tokens.h"

#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/memory.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/model_text.h>
#include <glmrt/generate/session.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/score/perplexity.h>
#include <glmrt/score/score_request.h>
#include <glmrt/score/sequence_scorer.h>
#include <glmrt/text/tokenizer.h>

#include <fmt/format.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <chrono>
#include <cstdio>

#include <iostream>

namespace glmrt::cli {
namespace {

namespace po = boost::program_options;

void write_line(const std::string& line) {
  if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size() || std::fflush(stdout) != 0)
    fail("score: cannot write to the output (closed pipe or full disk?)");
}

void report_progress(int64_t done, int64_t total, double seconds, Engine& engine) {
  fmt::print(stderr, "[score {}/{} | {:.1f} s | expert hit {:.0f}% | RSS {:.2f} GB]\n", done, total,
             seconds, 100.0 * engine.experts().stats().hit_rate(),
             static_cast<double>(current_rss_bytes()) / 1e9);
}

// Requests and text are read and checked before the model loads, so a bad
// line costs no loading time.
std::filesystem::path model_folder(const Profile& profile, const std::string& model_dir) {
  if (!model_dir.empty()) return model_dir;
  if (!profile.model)
    fail("no model: pass --model MODEL or set `model:` in the profile {}", profile.file);
  return *profile.model;
}

std::vector<ScoreRequest> read_requests(const std::string& path, const text::Tokenizer& tokenizer,
                                        const ModelConfig& config, int64_t max_context) {
  // An evaluation suite's requests: ~100 000 lines of a few KB at most.
  constexpr InputKind kRequests{"the requests file", 1024 * kInputMiB};
  const bool from_stdin = path == "-";
  const std::string text = from_stdin ? read_input_stream(STDIN_FILENO, "stdin", kRequests)
                                      : read_input_file(path, kRequests);
  const std::vector<ScoreRequest> requests =
      read_score_requests(text, from_stdin ? "stdin" : path, tokenizer, config.vocab_size);
  for (size_t i = 0; i < requests.size(); ++i)
    if (static_cast<int64_t>(requests[i].tokens.size()) > max_context)
      fail("{}: request {} has {} tokens, more than the profile's memory.max_context ({})", path,
           i + 1, requests[i].tokens.size(), max_context);
  return requests;
}

int score_requests(Engine& engine, const std::vector<ScoreRequest>& requests, bool json,
                   int ranks) {
  Session session(engine, std::nullopt);  // scoring decodes nothing: no drafter
  SequenceScorer scorer(session);
  const auto start = std::chrono::steady_clock::now();
  int64_t done = 0;
  for (const ScoreRequest& request : requests) {
    const auto scored = scorer.score(request.tokens, 0);
    const ContinuationScore c = score_continuation(scored.scores, request.context_length);
    write_line(json ? nlohmann::ordered_json{{"logprob", c.logprob},
                                             {"tokens", c.tokens},
                                             {"greedy", c.greedy},
                                             {"ranks", ranks}}
                              .dump() +
                          "\n"
                    : fmt::format("{:.6f} {} {}\n", c.logprob, c.tokens, c.greedy ? 1 : 0));
    if (++done % 50 == 0) report_progress(done, std::ssize(requests), seconds_since(start), engine);
  }
  const SessionStats& s = session.stats();
  fmt::print(stderr, "scored {} requests in {:.2f} s: {} positions computed, {} reused\n", done,
             seconds_since(start), s.prefilled_tokens, s.reused_tokens);
  return 0;
}

int score_perplexity(Engine& engine, const std::vector<int32_t>& tokens, int64_t window,
                     int64_t stride, bool json, int ranks) {
  Session session(engine, std::nullopt);  // scoring decodes nothing: no drafter
  SequenceScorer scorer(session);
  const auto start = std::chrono::steady_clock::now();
  const PerplexityResult r =
      perplexity(scorer, tokens, window, stride, [&](int64_t windows, int64_t scored) {
        if (windows % 10 == 0)
          fmt::print(stderr, "[perplexity: {} windows, {} tokens, {:.1f} s]\n", windows, scored,
                     seconds_since(start));
      });
  write_line(json ? nlohmann::ordered_json{{"perplexity", r.perplexity()},
                                           {"negative_log_likelihood", r.negative_log_likelihood},
                                           {"tokens", r.tokens},
                                           {"windows", r.windows},
                                           {"window", window},
                                           {"stride", stride},
                                           {"ranks", ranks}}
                            .dump() +
                        "\n"
                  : fmt::format("perplexity {:.4f} over {} tokens ({} windows of {}, stride {})\n",
                                r.perplexity(), r.tokens, r.windows, window, stride));
  fmt::print(stderr, "scored in {:.2f} s\n", seconds_since(start));
  return 0;
}

}  // namespace

int score_command(const Args& args, const Ranks& ranks) {
  po::options_description options(
      "glmrt score --profile P [--model MODEL] (--requests FILE | --perplexity FILE) [--json]\n"
      "  --requests: one request per line, `ctx_len cont_len id...` or\n"
      "  {\"context\": text|ids, \"continuation\": text|ids}; prints\n"
      "  `log-likelihood token-count is-greedy(0/1)` per request");
  std::string profile_path, model_dir, requests, text_file;
  int64_t window = 0, stride = 0;
  options.add_options()("help,h", "show this help")("profile", po::value(&profile_path)->required(),
                                                    "profile YAML")(
      "model", po::value(&model_dir), kModelHelp)("requests", po::value(&requests),
                                                  "requests file (`-` = stdin)")(
      "perplexity", po::value(&text_file), "a text file whose perplexity to print")(
      "window", po::value(&window),
      "perplexity: tokens per window (default min(memory.max_context, 2048))")(
      "stride", po::value(&stride), "perplexity: tokens between window starts (default window/2)")(
      "json", "one JSON value per line instead of text");
  const auto parsed = parse_options(args, options);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  if (vm.count("requests") == vm.count("perplexity"))
    fail("score: give exactly one of --requests FILE or --perplexity FILE");
  for (const char* flag : {"window", "stride"}) require_with(vm, "score", flag, "perplexity");
  if (window < 0 || stride < 0) fail("score: --window and --stride must be positive");

  const Profile profile = load_profile(profile_path);
  const std::filesystem::path folder = model_folder(profile, model_dir);
  const ModelConfig config = load_model_config(folder);
  const auto tokenizer = ModelText::open(folder).tokenizer();
  const int64_t max_context = profile.max_context;
  const bool json = vm.count("json") > 0;
  if (vm.count("requests")) {
    const auto input = read_requests(requests, tokenizer, config, max_context);
    auto engine = ranks.open(profile, folder);
    const auto shards = ranks.spread(*engine);
    return score_requests(*engine, input, json, ranks.count());
  }
  const std::vector<int32_t> tokens =
      read_text_tokens("--perplexity", text_file, tokenizer, profile, folder);
  if (window == 0) window = std::min<int64_t>(max_context, 2048);
  if (window > max_context)
    fail("--window {} is larger than the profile's memory.max_context ({})", window, max_context);
  if (stride == 0) stride = std::max<int64_t>(1, window / 2);
  if (tokens.size() < 2)
    fail("{}: the text encodes to {} token(s); perplexity needs at least 2", text_file,
         tokens.size());
  auto engine = ranks.open(profile, folder);
  const auto shards = ranks.spread(*engine);
  return score_perplexity(*engine, tokens, window, stride, json, ranks.count());
}

}  // namespace glmrt::cli
