// glmrt bench: the same prompt under each profile, profiles alternated and
// repeated, figures side by side (load, prefill and decode speed, disk, cache
// and prefetch, memory, and where a decode step's time goes).
#include "bench_report.h"
#include "bench_run.h"
#include "commands.h"
#include "options.h"

#include <glmrt/base/byte_size.h>
#include <glmrt/base/error.h>
#include <glmrt/model_files/model_config.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/algorithm/string.hpp>

#include <cstdio>

namespace glmrt::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

/// A default path: relative to the current folder when it exists there
/// (`build/glmrt bench` from the source tree), else to the source tree this
/// glmrt was built from.
fs::path default_path(const fs::path& relative) {
  if (fs::exists(relative)) return relative;
  return fs::path(GLMRT_SOURCE_DIR) / relative;
}

std::vector<int32_t> parse_prompt(const std::string& text) {
  std::vector<std::string> parts;
  boost::split(parts, text, boost::is_any_of(", "), boost::token_compress_on);
  std::vector<int32_t> ids;
  for (const std::string& p : parts) {
    if (p.empty()) continue;
    size_t used = 0;
    long v = -1;
    try {
      v = std::stol(p, &used);
    } catch (const std::exception&) {
    }
    if (used != p.size() || v < 0 || v > INT32_MAX)
      fail("bench: --prompt-ids: `{}` is not a token id", p);
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) fail("bench: --prompt-ids: no token ids given");
  return ids;
}

/// Eight ordinary token ids spread over the vocabulary.
std::vector<int32_t> default_prompt(const fs::path& model) {
  const ModelConfig config = load_model_config(model);
  std::vector<int32_t> ids;
  for (int64_t k = 0; k < 8; ++k)
    ids.push_back(static_cast<int32_t>((k * 7919 + 13) % config.vocab_size));
  return ids;
}

/// --parallel: each stream's prompt, the prompt itself for stream 0 and
/// (unless `same`) shifted by 97 per stream so the streams differ.
std::vector<std::vector<int32_t>> stream_prompts(const std::vector<int32_t>& prompt, int streams,
                                                 bool same, const fs::path& model) {
  const int64_t vocab = load_model_config(model).vocab_size;
  std::vector<std::vector<int32_t>> prompts;
  for (int k = 0; k < streams; ++k) {
    std::vector<int32_t> p = prompt;
    if (!same)
      for (int32_t& id : p) id = static_cast<int32_t>((id + int64_t{97} * k) % vocab);
    prompts.push_back(std::move(p));
  }
  return prompts;
}

}  // namespace

int bench_command(const Args& args, const Ranks& ranks) {
  po::options_description options(
      "glmrt bench [--model MODEL] [--profile A.yaml --profile B.yaml ...] [--evict] [--warmup] "
      "[--limits [--limits-memory SIZE]] [--reps N] [--parallel N [--same-prompt]] [--json]\n"
      "Runs the same prompt under each profile (alternating, repeated) and prints them side by\n"
      "side. Defaults: configs/reference.yaml against configs/nvme.yaml on\n"
      "tests/fixtures/glm_tiny");
  std::vector<std::string> profile_paths;
  std::string model_dir, prompt_ids, limits_memory = "4GiB";
  int reps = 3, new_tokens = 32, parallel = 0;
  options.add_options()("help,h", "show this help")(
      "model", po::value(&model_dir),
      "the model: a folder or a GGUF file, as for run (default: each profile's `model:`, else "
      "tests/fixtures/glm_tiny)")("profile", po::value(&profile_paths)->composing(),
                                  "a profile YAML; give it once per profile to compare")(
      "evict", "drop the model's files from the page cache before each run (a cold start)")(
      "warmup",
      "generate once, untimed, before the timed run in the same process (a warm start: "
      "with a cache that holds them, every expert the run needs is in RAM)")(
      "limits",
      "before each run, measure the drive (raw O_DIRECT reads of the model's largest file) and "
      "memory (reads of a --limits-memory buffer with the profile's threads), and report decode "
      "against the limits they set: the drive's GB/s over the expert bytes a step gets from "
      "it, memory's over the bytes a step reads")(
      "limits-memory", po::value(&limits_memory),
      "the buffer --limits reads memory speed from (default 4GiB: far beyond any cache)")(
      "reps", po::value(&reps), "repetitions of each profile (default 3)")(
      "prompt-ids", po::value(&prompt_ids),
      "prompt token ids, comma-separated (default: 8 ids spread over the vocabulary)")(
      "new-tokens,n", po::value(&new_tokens), "tokens to generate, greedily (default 32)")(
      "parallel", po::value(&parallel),
      "N streams decoding together, one forward per step (each MoE layer reads the union of "
      "their experts once): aggregate and per-stream decode tokens/s, and the distinct experts "
      "a step resolves against N x one stream's. Stream k's prompt is the prompt with every id "
      "shifted by 97k (modulo the vocabulary)")(
      "same-prompt", "with --parallel: every stream gets the same prompt")(
      "json", "print one JSON value on stdout instead of the table");
  const auto vm = parse_options(args, options);
  if (!vm) return 0;
  require_with(*vm, "bench", "limits-memory", "limits");
  if (reps < 1 || reps > 1000) fail("bench: --reps must be from 1 to 1000, got {}", reps);
  if (new_tokens < 1) fail("bench: --new-tokens must be at least 1, got {}", new_tokens);
  require_with(*vm, "bench", "same-prompt", "parallel");
  if (vm->count("parallel")) {
    if (parallel < 1 || parallel > 256)
      fail("bench: --parallel must be from 1 to 256 streams, got {}", parallel);
    if (vm->count("limits"))
      fail("bench: --limits measures one stream's decode: run it without --parallel");
    if (ranks.count() > 1)
      fail("bench: --parallel runs in one process; under mpirun ({} ranks) run it without",
           ranks.count());
  }

  if (profile_paths.empty())
    profile_paths = {default_path("configs/reference.yaml").string(),
                     default_path("configs/nvme.yaml").string()};
  std::vector<Profile> profiles;
  std::vector<BenchSeries> series;
  for (const std::string& path : profile_paths) {
    profiles.push_back(load_profile(path));
    series.push_back({path, {}});
  }
  BenchSetup setup;
  setup.model = !model_dir.empty()       ? fs::path(model_dir)
                : profiles.front().model ? fs::path(*profiles.front().model)
                                         : default_path("tests/fixtures/glm_tiny");
  setup.prompt = prompt_ids.empty() ? default_prompt(setup.model) : parse_prompt(prompt_ids);
  setup.new_tokens = new_tokens;
  setup.reps = reps;
  setup.evict = vm->count("evict") > 0;
  setup.warmup = vm->count("warmup") > 0;
  setup.limits = vm->count("limits") > 0;
  try {
    setup.memory_read_bytes = parse_byte_size(limits_memory);
  } catch (const std::exception& e) {
    fail("bench: --limits-memory: {}", e.what());
  }
  if (setup.memory_read_bytes < (uint64_t{1} << 20))
    fail("bench: --limits-memory: {} is under 1 MiB: the read would stay in the caches",
         limits_memory);
  setup.ranks = ranks.count();
  setup.parallel = parallel;
  setup.same_prompt = vm->count("same-prompt") > 0;

  const int total = reps * static_cast<int>(profiles.size());
  int done = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (size_t p = 0; p < profiles.size(); ++p) {
      fmt::print(stderr, "bench: run {}/{}: [{}] {}\n", ++done, total, p + 1, profile_paths[p]);
      // Without --model, a profile's own `model:` is its model: one run can
      // then compare containers (the same model in two formats).
      const fs::path model =
          model_dir.empty() && profiles[p].model ? fs::path(*profiles[p].model) : setup.model;
      const BenchStart start{setup.evict, setup.warmup, setup.limits, setup.memory_read_bytes};
      if (parallel > 0) {
        series[p].runs.push_back(run_bench_parallel(
            profiles[p], model, stream_prompts(setup.prompt, parallel, setup.same_prompt, model),
            new_tokens, start));
      } else {
        series[p].runs.push_back(
            run_bench_once(profiles[p], model, setup.prompt, new_tokens, start, ranks));
      }
    }
  }
  if (vm->count("json"))
    print_bench_json(stdout, setup, series);
  else
    print_bench_table(stdout, setup, series);
  return 0;
}

}  // namespace glmrt::cli
