#include "sampling_flags.h"

#include "unsigned_flag.h"

#include <glmrt/base/error.h>
#include <glmrt/sampling/sampling_limits.h>

#include <cstdint>

namespace glmrt::cli {

namespace po = boost::program_options;

po::options_description sampling_flags() {
  po::options_description flags("sampling (override the profile and generation_config.json)");
  flags.add_options()("temperature", po::value<double>(), "0 = greedy")(
      "top-k", po::value<int>(), "keep the k most probable tokens (0 = off)")(
      "top-p", po::value<double>(), "keep the smallest set with this much probability (1 = off)")(
      "min-p", po::value<double>(), "drop tokens below min-p x the top probability (0 = off)")(
      "repetition-penalty", po::value<double>(), "divide seen tokens' logits (1 = off)")(
      "presence-penalty", po::value<double>(), "subtract from generated tokens' logits (0 = off)")(
      "frequency-penalty", po::value<double>(),
      "subtract from generated tokens' logits once per occurrence (0 = off)")(
      "seed", po::value<std::string>(), "random seed (0 to 2^64-1)")(
      "max-new-tokens,n", po::value<int>(), "most tokens to generate per answer");
  return flags;
}

void check_sampling_flags(const po::variables_map& vm) {
  for (const SamplingRange& range : sampling_ranges()) {
    const std::string name(range.flag.substr(2));  // without the leading "--"
    if (!vm.count(name)) continue;
    const double value = range.integer ? vm[name].as<int>() : vm[name].as<double>();
    if (auto error = sampling_value_error(range.setting, value)) fail("{}: {}", range.flag, *error);
  }
  if (vm.count("seed")) parse_unsigned_flag("--seed", vm["seed"].as<std::string>());
}

SamplingParams apply_sampling_flags(SamplingParams p, const po::variables_map& vm) {
  if (vm.count("temperature")) p.temperature = vm["temperature"].as<double>();
  if (vm.count("top-k")) p.top_k = vm["top-k"].as<int>();
  if (vm.count("top-p")) p.top_p = vm["top-p"].as<double>();
  if (vm.count("min-p")) p.min_p = vm["min-p"].as<double>();
  if (vm.count("repetition-penalty")) p.repetition_penalty = vm["repetition-penalty"].as<double>();
  if (vm.count("presence-penalty")) p.presence_penalty = vm["presence-penalty"].as<double>();
  if (vm.count("frequency-penalty")) p.frequency_penalty = vm["frequency-penalty"].as<double>();
  if (vm.count("seed")) p.seed = parse_unsigned_flag("--seed", vm["seed"].as<std::string>());
  if (vm.count("max-new-tokens")) p.max_new_tokens = vm["max-new-tokens"].as<int>();
  return p;
}

}  // namespace glmrt::cli
