// glmrt run: generate a continuation of a prompt given as token ids.
#include "commands.h"

#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/session.h>

#include <boost/algorithm/string.hpp>
#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>

namespace glmrt::cli {
namespace {

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<std::string> parts;
  boost::split(parts, text, boost::is_any_of(", "), boost::token_compress_on);
  std::vector<int32_t> ids;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    size_t used = 0;
    long v = -1;
    try {
      v = std::stol(p, &used);
    } catch (const std::exception&) {
    }
    if (used != p.size() || v < 0 || v > INT32_MAX)
      fail("--prompt-ids: `{}` is not a token id (expected comma-separated non-negative integers)", p);
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) fail("--prompt-ids: no token ids given");
  return ids;
}

}  // namespace

int run_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("glmrt run --profile P [--model DIR] --prompt-ids IDS [-n N]");
  std::string profile_path, model_dir, prompt_ids;
  int n_tokens = 32;
  options.add_options()("help,h", "show this help")(
      "profile", po::value(&profile_path)->required(), "profile YAML")(
      "model", po::value(&model_dir), "model directory (default: the profile's `model`)")(
      "prompt-ids", po::value(&prompt_ids)->required(), "prompt as comma-separated token ids")(
      "n,n", po::value(&n_tokens), "tokens to generate (default 32)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  po::notify(vm);
  if (n_tokens < 0) fail("-n must be non-negative, got {}", n_tokens);

  const Profile profile = load_profile(profile_path);
  auto engine = Engine::open(profile, model_dir);
  Session session(*engine);
  const auto prompt = parse_ids(prompt_ids);

  std::vector<int32_t> generated;
  if (n_tokens > 0) {
    auto logits = session.set_context(prompt);
    for (int i = 0; i < n_tokens; ++i) {
      const int32_t next =
          static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      generated.push_back(next);
      if (i + 1 < n_tokens) logits = session.append(next);
    }
  }
  fmt::print("{}\n", fmt::join(generated, ","));

  const auto& s = session.stats();
  const auto& e = engine->experts().stats();
  fmt::print(stderr,
             "prefill: {} tokens in {:.3f} s ({:.2f} tokens/s); decode: {} tokens in {:.3f} s "
             "({:.2f} tokens/s)\nexpert cache: hit rate {:.1f}% ({} hits, {} misses, {:.1f} MiB "
             "read)\npeak RSS: {:.1f} MiB; budgeted memory peak {:.1f} MiB\n",
             s.prefilled_tokens, s.prefill_seconds,
             s.prefill_seconds > 0 ? s.prefilled_tokens / s.prefill_seconds : 0.0,
             s.decoded_tokens, s.decode_seconds,
             s.decode_seconds > 0 ? s.decoded_tokens / s.decode_seconds : 0.0,
             100.0 * e.hit_rate(), e.hits, e.misses, e.bytes_read / 1048576.0,
             peak_rss_bytes() / 1048576.0, engine->budget().peak() / 1048576.0);
  return 0;
}

}  // namespace glmrt::cli
