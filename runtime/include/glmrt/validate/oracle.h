// Reference outputs produced by Hugging Face transformers (ref.json), and the
// comparison of a profile's outputs against them.
#pragma once

#include <glmrt/model/mla_core.h>
#include <glmrt/profile/profile.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
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
  // The reference's discrete decisions, when it recorded them (else empty):
  // layer -> row i -> the sorted key positions query sparse_rows_from + i kept
  // (the MTP layer is num_hidden_layers and counts its own positions) ...
  std::map<int, std::vector<std::vector<int32_t>>> indexer_topk;
  // ... and MoE layer -> position -> its sorted routed expert ids.
  std::map<int, std::vector<std::vector<int32_t>>> experts;
};

/// Reads ref.json and checks it is self-consistent (prompt a prefix of the
/// full sequence, generated ids consistent with it, one row of every per-row
/// field per position, finite logits, at least one case); errors name the file,
/// the case and the field.
std::vector<OracleCase> load_oracle(const std::filesystem::path& file);

/// Where the run first took another discrete decision than the reference.
struct Divergence {
  std::string kind;  // "indexer" (DSA key selection) or "experts" (routing)
  int layer = 0;     // num_hidden_layers = the MTP layer
  int64_t position = 0;
  std::vector<int32_t> ours, reference;
};

/// What the greedy continuation's decoding did: drafts proposed and accepted,
/// and the decode forwards that verified them.
struct DraftReport {
  std::string drafter;  // empty: decoded without one
  int64_t proposed = 0, accepted = 0, forwards = 0;
};

struct CaseReport {
  std::string name;
  int64_t rows_total = 0;
  int64_t rows_checked = 0;   // rows whose logits were compared
  int64_t rows_need_dsa = 0;  // sparse rows whose reference selection this run did not reproduce
  bool greedy_checked = false;
  int64_t greedy_identical = 0, greedy_total = 0;
  double top1_agree = 0;  // fraction of checked rows with a clear reference margin
  double max_abs_dlogit = 0, mean_kl = 0;
  bool mtp_checked = false;
  double mtp_top1_agree = 0;    // MTP argmax agreement on rows with a clear reference margin
  int64_t non_finite_rows = 0;  // rows with a NaN or infinite logit (fail the case)
  // Decisions compared with the reference's `indexer_topk` / `experts`.
  int64_t indexer_rows_compared = 0, indexer_rows_differ = 0;
  int64_t routing_rows_compared = 0, routing_rows_differ = 0;
  std::optional<Divergence> first_divergence;
  int64_t prefill_chunk = 0;  // 0 = whole sequences in one forward call
  int64_t forward_calls = 0, mtp_forward_calls = 0;
  DraftReport draft;
  bool pass = false;
};

struct ValidationReport {
  ValidateThresholds thresholds;
  std::vector<CaseReport> cases;
  bool pass = false;
};

struct ValidateOptions {
  int64_t prefill_chunk = 0;  // positions per forward call; 0 = whole sequences
  AttentionFormChoice attention_form = AttentionFormChoice::automatic;
};

/// Runs every case: teacher-forced logits of full_ids prefilled in chunks of
/// options.prefill_chunk, and the greedy continuation through the generation
/// loop (prefill, then decode steps, verifying the profile's drafter's drafts
/// when it names one). Throws when the reference does not fit the model
/// (vocabulary, MTP fields missing for an MTP model).
ValidationReport validate(Engine& engine, const std::vector<OracleCase>& cases,
                          const ValidateThresholds& thresholds, const ValidateOptions& options);

}  // namespace glmrt
