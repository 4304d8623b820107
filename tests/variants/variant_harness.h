// Shared by the variant suites: a base config in glmrt-untested dimensions,
// engine construction under the reference profile, and the choice of a
// prompt whose discrete decisions (router, indexer, greedy) are clear of ties.
#pragma once

#include <glmrt/engine/engine.h>
#include <glmrt/validate/oracle.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "host_tensor.h"
#include "reference_config.h"
#include "reference_forward.h"

namespace glmrt::test {

/// Variant (a): dimensions unlike glm_tiny's (hidden 48, 3 heads, kv_lora 24,
/// q_lora 40, qk 12+4, v 20, 12 experts top-3, 5 layers of which 2 dense by
/// mlp_layer_types, index_topk 6, 3 index heads of 8).
nlohmann::json base_variant_config();

/// An f32 profile (configs/$GLMRT_VARIANT_PROFILE, default reference.yaml) with
/// this build's plugins.
std::unique_ptr<Engine> open_reference_engine(const std::filesystem::path& model_dir);

/// Smallest gap any discrete decision may have for a comparison to be fair.
inline constexpr double kMinDecisionGap = 1e-3;

struct ClearSequence {
  std::vector<int32_t> prompt;
  std::vector<int32_t> greedy;  // the reference's greedy continuation of prompt
  std::vector<int32_t> full;    // prompt + greedy[0..n-2]: every greedy step is a tf row
  ReferenceResult reference;    // over `full`, with MTP logits when the config has MTP
  int attempts = 0;
};

/// Draws random prompts of `prompt_length` tokens (seeded) until the
/// reference's router gaps, indexer gaps (MTP layer included) and greedy margins over prompt plus
/// `greedy_steps` generated tokens are all >= kMinDecisionGap. Throws after
/// `max_attempts`.
ClearSequence choose_clear_sequence(const ReferenceConfig& config, const TensorList& weights,
                                    int prompt_length, int greedy_steps, uint64_t seed,
                                    int max_attempts = 2000);

/// Logits [rows][vocab] of one teacher-forced runtime forward over `tokens`.
std::vector<std::vector<float>> runtime_teacher_forced(Engine& engine,
                                                       const std::vector<int32_t>& tokens);

int argmax(const std::vector<float>& row);

/// `s` as a ref.json case of the independent reference (greedy continuation,
/// teacher-forced logits, MTP predictions, DSA selections and routing), so
/// `validate` can check the runtime against it.
OracleCase oracle_case(const ClearSequence& s, const ReferenceConfig& config, std::string name);

}  // namespace glmrt::test
