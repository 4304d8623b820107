// Which experts the pinned set holds: the most used ones in the usage
// history, ranked over every layer (each layer routes the same number of
// selections per token, so counts compare across layers), as many as fit.
#pragma once

#include <glmrt/history/expert_usage.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace glmrt {

/// At most bytes / expert_bytes experts, most used first, only in rows
/// `has_experts` marks (MoE layers the store holds) and, when `keep` is
/// given, only those it accepts (the experts this process runs).
std::vector<ExpertKey> choose_pinned_experts(
    const ExpertUsage& usage, uint64_t bytes, uint64_t expert_bytes,
    const std::vector<bool>& has_experts, const std::function<bool(const ExpertKey&)>& keep = {});

}  // namespace glmrt
