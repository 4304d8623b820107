// Reference outputs produced by Hugging Face transformers (ref.json), and the
// comparison of a profile's outputs against them.
#pragma once

#include <glmrt/profile/profile.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace glmrt {

class Engine;

struct OracleCase {
  std::string name;
  std::vector<int32_t> prompt_ids, generated_ids, full_ids, tf_pred;
  std::vector<double> margin;               // top1 - top2 per position
  std::vector<std::vector<double>> logits;  // [positions][vocab]
  bool dense_equivalent = false;
  int64_t sparse_rows_from = 0;
  // The MTP head's argmax for full_ids[t + 2] given full_ids[t + 1] and the main
  // hidden state at t (empty when the reference has none).
  std::vector<int32_t> mtp_pred;
  std::vector<double> mtp_margin;
};

/// Reads ref.json; errors name the file and the field.
std::vector<OracleCase> load_oracle(const std::filesystem::path& file);

struct CaseReport {
  std::string name;
  int64_t rows_total = 0, rows_checked = 0, rows_need_dsa = 0;
  bool greedy_checked = false;
  int64_t greedy_identical = 0, greedy_total = 0;
  double top1_agree = 0;  // fraction of checked rows with a clear reference margin
  double max_abs_dlogit = 0, mean_kl = 0;
  bool mtp_checked = false;
  double mtp_top1_agree = 0;  // MTP argmax agreement on rows with a clear reference margin
  bool pass = false;
};

struct ValidationReport {
  ValidateThresholds thresholds;
  std::vector<CaseReport> cases;
  bool pass = false;
};

/// Runs every case: teacher-forced logits of full_ids in one batched prefill,
/// and the greedy continuation through prefill + incremental decode (the path
/// generation uses).
ValidationReport validate(Engine& engine, const std::vector<OracleCase>& cases,
                          const ValidateThresholds& thresholds);

}  // namespace glmrt
