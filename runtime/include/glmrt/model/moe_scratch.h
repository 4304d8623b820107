// Buffers an MoE block reuses from step to step and layer to layer, so the
// hot path allocates nothing once they have grown to the largest step.
#pragma once

#include <glmrt/plugin/kernels.h>

#include <cstdint>
#include <vector>

namespace glmrt {

struct MoeScratch {
  std::vector<float> logits;           // [S, experts]
  std::vector<int32_t> ids;            // the step's distinct experts, ascending
  std::vector<int64_t> first_user;     // by expert (and one past): its users in the lists below
  std::vector<int64_t> user_position;  // positions that chose each expert, grouped by expert
  std::vector<float> user_weight;
  std::vector<int64_t> position_users;  // each position's users, by expert id
  std::vector<int64_t> position_first;  // by position (and one past): its users in position_users
  std::vector<int64_t> count;           // by expert id
  std::vector<float> contributions;     // [users, hidden]: each user's expert output
  std::vector<uint8_t> user_done;       // by user: its expert has run (this step)
  // The gathered input rows and the gate / up activations of the experts of
  // one grouped call, and the call's list of products.
  std::vector<float> expert_rows, expert_gate, expert_up;
  std::vector<glmrt_matmul_product> products;
  std::vector<float> shared;  // [S, hidden]
  // Prefetch prediction for the next layer.
  std::vector<float> predict_normed, predict_logits;
  std::vector<int32_t> predicted;
  std::vector<int64_t> votes;
};

/// Positions per thread whose expert rows one grouped call of the MoE block
/// holds at least (a call holds max(S, this) x threads users' rows).
inline constexpr int64_t kGroupedExpertRows = 64;

/// Where a step's time went (seconds), summed over steps.
struct StepTimes {
  double attention = 0;  // MLA attention and the DSA indexer
  double experts = 0;    // routed experts' matmuls (gather, SwiGLU, scatter)
  double predict = 0;    // predicting the next layer's experts
};

}  // namespace glmrt
