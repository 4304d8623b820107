// glmrt validate: runs a profile against reference outputs and reports
// agreement, like llama.cpp's KL-divergence mode.
#include "cache_bias_report.h"
#include "commands.h"
#include "expert_counters_report.h"
#include "options.h"
#include "text_tokens.h"

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/model_text.h>
#include <glmrt/text/tokenizer.h>
#include <glmrt/validate/oracle.h>
#include <glmrt/validate/profile_comparison.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <climits>
#include <iostream>

namespace glmrt::cli {
namespace {

namespace po = boost::program_options;

AttentionFormChoice parse_form(const std::string& text) {
  if (text == "auto") return AttentionFormChoice::automatic;
  if (text == "absorbed") return AttentionFormChoice::absorbed;
  if (text == "reconstructed") return AttentionFormChoice::reconstructed;
  fail("--attention-form: expected auto, absorbed or reconstructed, found `{}`", text);
}

const char* form_name(AttentionFormChoice form) {
  switch (form) {
    case AttentionFormChoice::absorbed:
      return "absorbed";
    case AttentionFormChoice::reconstructed:
      return "reconstructed";
    case AttentionFormChoice::automatic:
      break;
  }
  return "auto";
}

nlohmann::json divergence_json(const std::optional<Divergence>& d) {
  if (!d) return nullptr;
  return {{"kind", d->kind},
          {"layer", d->layer},
          {"position", d->position},
          {"ours", d->ours},
          {"reference", d->reference}};
}

std::string describe(const Divergence& d) {
  return fmt::format("{} of layer {} at position {}: ours [{}], reference [{}]",
                     d.kind == "indexer" ? "DSA selection" : "routed experts", d.layer, d.position,
                     fmt::join(d.ours, ","), fmt::join(d.reference, ","));
}

nlohmann::json to_json(const ValidationReport& r, AttentionFormChoice form) {
  nlohmann::json j;
  j["attention_form"] = form_name(form);
  j["pass"] = r.pass;
  j["thresholds"] = {{"min_top1", r.thresholds.min_top1},
                     {"max_kl", r.thresholds.max_kl},
                     {"max_dlogit", r.thresholds.max_dlogit},
                     {"min_margin", r.thresholds.min_margin},
                     {"greedy_identical", r.thresholds.greedy_identical}};
  j["cases"] = nlohmann::json::array();
  for (const auto& c : r.cases) {
    j["cases"].push_back({{"name", c.name},
                          {"rows_total", c.rows_total},
                          {"rows_checked", c.rows_checked},
                          {"rows_need_dsa", c.rows_need_dsa},
                          {"greedy_checked", c.greedy_checked},
                          {"greedy_identical", c.greedy_identical},
                          {"greedy_total", c.greedy_total},
                          {"top1_agree", c.top1_agree},
                          {"max_abs_dlogit", c.max_abs_dlogit},
                          {"mean_kl", c.mean_kl},
                          {"mtp_checked", c.mtp_checked},
                          {"mtp_top1_agree", c.mtp_top1_agree},
                          {"pass", c.pass},
                          {"prefill_chunk", c.prefill_chunk},
                          {"forward_calls", c.forward_calls},
                          {"mtp_forward_calls", c.mtp_forward_calls},
                          {"draft",
                           {{"drafter", c.draft.drafter.empty() ? nlohmann::json(nullptr)
                                                                : nlohmann::json(c.draft.drafter)},
                            {"proposed", c.draft.proposed},
                            {"accepted", c.draft.accepted},
                            {"forwards", c.draft.forwards}}},
                          {"non_finite_rows", c.non_finite_rows},
                          {"indexer_rows_compared", c.indexer_rows_compared},
                          {"indexer_rows_differ", c.indexer_rows_differ},
                          {"routing_rows_compared", c.routing_rows_compared},
                          {"routing_rows_differ", c.routing_rows_differ},
                          {"first_divergence", divergence_json(c.first_divergence)}});
  }
  return j;
}

void print_text(const ValidationReport& r) {
  // rows = rows compared; DSA = sparse rows whose reference selection was not reproduced.
  fmt::print("{:<12} {:>6} {:>5} {:>9} {:>8} {:>12} {:>12} {:>8}  {}\n", "case", "rows", "DSA",
             "greedy", "top1", "max|dlogit|", "mean KL", "mtp top1", "result");
  double worst_dlogit = 0, kl_sum = 0;
  for (const auto& c : r.cases) {
    fmt::print("{:<12} {:>6} {:>5} {:>4}/{:<4} {:>8.4f} {:>12.3e} {:>12.3e} {:>8}  {}\n", c.name,
               c.rows_checked, c.rows_need_dsa, c.greedy_identical, c.greedy_total, c.top1_agree,
               c.max_abs_dlogit, c.mean_kl,
               c.mtp_checked ? fmt::format("{:.4f}", c.mtp_top1_agree) : "-",
               c.pass ? "pass" : "FAIL");
    worst_dlogit = std::max(worst_dlogit, c.max_abs_dlogit);
    kl_sum += c.mean_kl;
  }
  for (const auto& c : r.cases) {
    if (c.non_finite_rows)
      fmt::print("{}: {} rows have NaN or infinite logits\n", c.name, c.non_finite_rows);
    if (c.first_divergence)
      fmt::print(
          "{}: {} of {} DSA rows and {} of {} routing rows differ from the reference; first: "
          "{}\n",
          c.name, c.indexer_rows_differ, c.indexer_rows_compared, c.routing_rows_differ,
          c.routing_rows_compared, describe(*c.first_divergence));
  }
  for (const auto& c : r.cases)
    if (!c.draft.drafter.empty())
      fmt::print("{}: greedy decode with {}: {} drafts proposed, {} accepted, {} forwards\n",
                 c.name, c.draft.drafter, c.draft.proposed, c.draft.accepted, c.draft.forwards);
  if (!r.cases.empty()) {
    int64_t calls = 0;
    for (const auto& c : r.cases) calls += c.forward_calls;
    fmt::print("prefill: {}; {} forward calls\n",
               r.cases.front().prefill_chunk
                   ? fmt::format("in chunks of {} positions", r.cases.front().prefill_chunk)
                   : std::string("whole sequences in one call"),
               calls);
  }
  fmt::print(
      "overall: {} (thresholds: top1 >= {}, max|dlogit| <= {:g}, mean KL <= {:g}, greedy {}) "
      "worst max|dlogit| {:.3e}, mean KL {:.3e}\n",
      r.pass ? "PASS" : "FAIL", r.thresholds.min_top1, r.thresholds.max_dlogit, r.thresholds.max_kl,
      r.thresholds.greedy_identical ? "identical" : "not required", worst_dlogit,
      r.cases.empty() ? 0.0 : kl_sum / r.cases.size());
}

// Token ids from a file: decimal numbers separated by spaces, commas or lines.
std::vector<int32_t> read_ids(const std::string& path) {
  // Eleven bytes per id at most: far more ids than any context holds.
  constexpr InputKind kIds{"the token ids", 256 * kInputMiB};
  const std::string text = read_input_file(path, kIds);
  std::vector<int32_t> ids;
  constexpr std::string_view kSeparators = " ,\t\r\n";
  for (size_t at = text.find_first_not_of(kSeparators); at != std::string::npos;
       at = text.find_first_not_of(kSeparators, at)) {
    const size_t end = std::min(text.find_first_of(kSeparators, at), text.size());
    const std::string_view part = std::string_view(text).substr(at, end - at);
    int64_t v = -1;
    const auto [stop, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || stop != part.data() + part.size() || v < 0 || v > INT32_MAX)
      fail("--ids {}: `{}` (token {}) is not a token id", path, printable(part, 40), ids.size());
    ids.push_back(static_cast<int32_t>(v));
    at = end;
  }
  return ids;
}

// --against: profile Q against profile P on any text.
int compare_command(const po::variables_map& vm, const Profile& q_profile,
                    const std::string& model_dir, const Ranks& ranks) {
  Profile p_profile = load_profile(vm["against"].as<std::string>());
  // One model folder: verified once is enough.
  if (q_profile.verify_checksums) p_profile.verify_checksums = false;
  std::vector<int32_t> ids;
  if (vm.count("ids")) {
    ids = read_ids(vm["ids"].as<std::string>());
  } else if (vm.count("text")) {
    // Before the models load, within Q's memory plan.
    const auto folder = Engine::model_dir_for(q_profile, model_dir);
    ids = read_text_tokens("--text", vm["text"].as<std::string>(),
                           ModelText::open(folder).tokenizer(), q_profile, folder);
  } else {
    fail("--against needs --text FILE or --ids FILE");
  }
  auto q = ranks.open(q_profile, model_dir);
  auto p = Engine::open(p_profile, model_dir);
  const auto shards = ranks.spread(*q);  // the reference P runs on rank 0 alone
  const int64_t window = vm["window"].as<int64_t>();
  const ProfileComparison c = compare_profiles(
      *q, *p, ids, window,
      q->memory_plan().prefill_chunk_from_budget ? q->prefill_chunk() : q_profile.prefill_chunk);
  if (vm.count("json")) {
    nlohmann::json j{
        {"positions", c.positions}, {"mean_kl", c.mean_kl},       {"p99_kl", c.p99_kl},
        {"max_kl", c.max_kl},       {"same_top1", c.same_top1},   {"ppl", c.ppl_q},
        {"ppl_against", c.ppl_p},   {"ppl_ratio", c.ppl_ratio()}, {"ranks", ranks.count()}};
    // Only when on: exact comparisons print what they always did.
    if (c.cache_bias_q.on()) j["cache_bias"] = cache_bias_json(c.cache_bias_q);
    if (c.cache_bias_p.on()) j["cache_bias_against"] = cache_bias_json(c.cache_bias_p);
    std::cout << j.dump(2) << "\n";
  } else {
    fmt::print(
        "{} positions: mean KL {:.4e}, p99 KL {:.4e}, max KL {:.4e}, same top-1 {:.2f}%, "
        "perplexity {:.4f} vs {:.4f} (ratio {:.4f})\n",
        c.positions, c.mean_kl, c.p99_kl, c.max_kl, 100.0 * c.same_top1, c.ppl_q, c.ppl_p,
        c.ppl_ratio());
    if (c.cache_bias_q.on())
      fmt::print("{}; one decode step per position\n", describe_cache_bias(c.cache_bias_q));
    if (c.cache_bias_p.on())
      fmt::print("against: {}; one decode step per position\n",
                 describe_cache_bias(c.cache_bias_p));
  }
  bool pass = true;
  if (vm.count("max-kl")) pass = pass && c.mean_kl <= vm["max-kl"].as<double>();
  if (vm.count("min-top1")) pass = pass && c.same_top1 >= vm["min-top1"].as<double>();
  return pass ? 0 : 1;
}

}  // namespace

int validate_command(const Args& args, const Ranks& ranks) {
  po::options_description options(
      "glmrt validate --profile P --model MODEL --ref REF [options]\n"
      "glmrt validate --profile Q --against P --model MODEL (--text FILE | --ids FILE) [options]");
  std::string profile_path, model_dir, ref_path;
  options.add_options()("help,h", "show this help")("profile", po::value(&profile_path)->required(),
                                                    "profile YAML")(
      "model", po::value(&model_dir), kModelHelp)("ref", po::value(&ref_path),
                                                  "reference outputs (ref.json)")(
      "against", po::value<std::string>(),
      "compare with this profile (the reference P) instead of an oracle file")(
      "text", po::value<std::string>(), "with --against: text to compare on (model's tokenizer)")(
      "ids", po::value<std::string>(), "with --against: token ids to compare on")(
      "window", po::value<int64_t>()->default_value(512),
      "with --against: tokens per sequence (a longer input is cut into windows)")(
      "json", "print one JSON object instead of a table")("min-top1", po::value<double>(),
                                                          "override validate.min_top1")(
      "max-kl", po::value<double>(), "override validate.max_kl")("max-dlogit", po::value<double>(),
                                                                 "override validate.max_dlogit")(
      "prefill-chunk", po::value<int64_t>(),
      "positions per forward call (override memory.prefill_chunk; 0 = whole sequences)")(
      "attention-form", po::value<std::string>()->default_value("auto"),
      "auto (the cost model's choice), absorbed or reconstructed: force one MLA form")(
      "verify",
      "check the container's files against its checksums.json before loading "
      "(memory.verify_checksums)");
  const auto parsed = parse_options(args, options);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;

  // Each mode reads its own flags; one given to the other mode would be ignored.
  refuse_together(vm, "validate", "ref", "against");
  refuse_together(vm, "validate", "text", "ids");
  for (const char* flag : {"text", "ids", "window"}) require_with(vm, "validate", flag, "against");
  for (const char* flag : {"max-dlogit", "prefill-chunk", "attention-form"})
    refuse_together(vm, "validate", "against", flag);

  Profile profile = load_profile(profile_path);
  if (vm.count("verify")) profile.verify_checksums = true;
  if (vm.count("against")) return compare_command(vm, profile, model_dir, ranks);
  if (ref_path.empty())
    fail("--ref: the reference outputs are required (or compare with --against)");
  ValidateThresholds th = profile.validate;
  if (vm.count("min-top1")) th.min_top1 = vm["min-top1"].as<double>();
  if (vm.count("max-kl")) th.max_kl = vm["max-kl"].as<double>();
  if (vm.count("max-dlogit")) th.max_dlogit = vm["max-dlogit"].as<double>();

  ValidateOptions run_options;
  run_options.prefill_chunk = profile.prefill_chunk;
  if (vm.count("prefill-chunk")) {
    run_options.prefill_chunk = vm["prefill-chunk"].as<int64_t>();
    if (run_options.prefill_chunk < 0)
      fail("--prefill-chunk: expected 0 (whole sequences) or a positive count, found {}",
           run_options.prefill_chunk);
  }
  run_options.attention_form = parse_form(vm["attention-form"].as<std::string>());

  const auto cases = load_oracle(ref_path);
  auto engine = ranks.open(profile, model_dir);
  const auto shards = ranks.spread(*engine);
  // The profile's whole-sequence prefill, unless the memory plan had to chunk it.
  if (!vm.count("prefill-chunk") && engine->memory_plan().prefill_chunk_from_budget)
    run_options.prefill_chunk = engine->prefill_chunk();
  const ValidationReport report = validate(*engine, cases, th, run_options);
  print_expert_counters(stderr, *engine);  // pinning must never change the results above
  print_rank_report(stderr, *engine, shards.get());
  if (vm.count("json")) {
    nlohmann::json j = to_json(report, run_options.attention_form);
    j["ranks"] = ranks.count();
    j["rank_experts"] = rank_experts_json(rank_counters(*engine, shards.get()));
    // Only when on (the greedy decodes are its decode steps): an exact run's
    // report is what it always was.
    if (engine->model().cache_bias().on())
      j["cache_bias"] = cache_bias_json(cache_bias_so_far(engine->model()));
    std::cout << j.dump(2) << "\n";
  } else {
    print_text(report);
    if (engine->model().cache_bias().on())
      fmt::print("{} (teacher-forced rows are routed exactly; greedy decodes are not)\n",
                 describe_cache_bias(cache_bias_so_far(engine->model())));
  }
  return report.pass ? 0 : 1;
}

}  // namespace glmrt::cli
