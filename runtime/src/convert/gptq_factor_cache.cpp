#include "gptq_factor_cache.h"

#include <glmrt/base/elapsed_time.h>

#include <fmt/format.h>

#include <chrono>

namespace glmrt {

GptqFactorCache::GptqFactorCache(const ImportanceTable& table, double damping,
                                 double min_rows_per_col)
    : table_(table), damping_(damping), min_rows_per_col_(min_rows_per_col) {}

const GptqFactor* GptqFactorCache::find(const std::string& weight) {
  const auto enough = [&](const ImportanceTable::MomentRef* ref) {
    return ref != nullptr &&
           static_cast<double>(ref->rows) >= min_rows_per_col_ * static_cast<double>(ref->cols);
  };
  // A routed expert's gate/up by its own tokens' moments when they are
  // enough, else by the layer's shared ones (every token); else rtn.
  const ImportanceTable::MomentRef* ref = table_.find_moments(weight);
  if (!enough(ref)) {
    ref = table_.find_fallback_moments(weight);
    if (!enough(ref)) {
      ++rtn_;
      return nullptr;
    }
    ++shared_;
  }
  ++gptq_;
  for (auto it = recent_.begin(); it != recent_.end(); ++it)
    if (it->first == ref->tensor) {
      recent_.splice(recent_.begin(), recent_, it);
      return &recent_.front().second;
    }
  if (recent_.size() >= 2) recent_.pop_back();  // freed before the next is built
  const auto start = std::chrono::steady_clock::now();
  const std::vector<float> sums = table_.read_moments(*ref);
  recent_.emplace_front(ref->tensor, gptq_factor(sums, ref->cols, damping_,
                                                 fmt::format("--importance {}: tensor {}",
                                                             table_.file.string(), ref->tensor)));
  factor_seconds_ += seconds_since(start);
  ++computed_;
  return &recent_.front().second;
}

}  // namespace glmrt
