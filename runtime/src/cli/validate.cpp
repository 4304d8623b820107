// glmrt validate: runs a profile against reference outputs and reports
// agreement, like llama.cpp's KL-divergence mode.
#include "commands.h"
#include "options.h"

#include <glmrt/engine/engine.h>
#include <glmrt/validate/oracle.h>

#include <fmt/format.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <iostream>

namespace glmrt::cli {
namespace {

nlohmann::json to_json(const ValidationReport& r) {
  nlohmann::json j;
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
                          {"pass", c.pass}});
  }
  return j;
}

void print_text(const ValidationReport& r) {
  fmt::print("{:<12} {:>6} {:>9} {:>8} {:>12} {:>12} {:>8}  {}\n", "case", "rows", "greedy", "top1",
             "max|dlogit|", "mean KL", "mtp top1", "result");
  double worst_dlogit = 0, kl_sum = 0;
  for (const auto& c : r.cases) {
    fmt::print("{:<12} {:>6} {:>4}/{:<4} {:>8.4f} {:>12.3e} {:>12.3e} {:>8}  {}\n", c.name,
               c.rows_checked, c.greedy_identical, c.greedy_total, c.top1_agree, c.max_abs_dlogit,
               c.mean_kl, c.mtp_checked ? fmt::format("{:.4f}", c.mtp_top1_agree) : "-",
               c.pass ? "pass" : "FAIL");
    worst_dlogit = std::max(worst_dlogit, c.max_abs_dlogit);
    kl_sum += c.mean_kl;
  }
  fmt::print(
      "overall: {} (thresholds: top1 >= {}, max|dlogit| <= {:g}, mean KL <= {:g}, greedy {}) "
      "worst max|dlogit| {:.3e}, mean KL {:.3e}\n",
      r.pass ? "PASS" : "FAIL", r.thresholds.min_top1, r.thresholds.max_dlogit, r.thresholds.max_kl,
      r.thresholds.greedy_identical ? "identical" : "not required", worst_dlogit,
      r.cases.empty() ? 0.0 : kl_sum / r.cases.size());
}

}  // namespace

int validate_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("glmrt validate --profile P --model DIR --ref REF [options]");
  std::string profile_path, model_dir, ref_path;
  options.add_options()("help,h", "show this help")("profile", po::value(&profile_path)->required(),
                                                    "profile YAML")(
      "model", po::value(&model_dir), "model directory (default: the profile's `model`)")(
      "ref", po::value(&ref_path)->required(), "reference outputs (ref.json)")(
      "json", "print one JSON object instead of a table")("min-top1", po::value<double>(),
                                                          "override validate.min_top1")(
      "max-kl", po::value<double>(), "override validate.max_kl")("max-dlogit", po::value<double>(),
                                                                 "override validate.max_dlogit");
  const auto parsed = parse_options(args, options);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;

  Profile profile = load_profile(profile_path);
  ValidateThresholds th = profile.validate;
  if (vm.count("min-top1")) th.min_top1 = vm["min-top1"].as<double>();
  if (vm.count("max-kl")) th.max_kl = vm["max-kl"].as<double>();
  if (vm.count("max-dlogit")) th.max_dlogit = vm["max-dlogit"].as<double>();

  const auto cases = load_oracle(ref_path);
  auto engine = Engine::open(profile, model_dir);
  const ValidationReport report = validate(*engine, cases, th);
  if (vm.count("json"))
    std::cout << to_json(report).dump(2) << "\n";
  else
    print_text(report);
  return report.pass ? 0 : 1;
}

}  // namespace glmrt::cli
