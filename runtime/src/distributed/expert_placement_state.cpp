// Rank 0's bookkeeping for distributed.placement least_loaded: where each
// expert is (its own store, each rank's answers), what each rank's drive has
// queued, and which ranks are left to run a lost rank's experts (serve).
#include <glmrt/base/warning.h>
#include <glmrt/distributed/expert_cluster.h>
#include <glmrt/distributed/fault_report.h>
#include <glmrt/distributed/step_placement.h>

#include <algorithm>

namespace glmrt {

std::vector<double> ShardedExperts::queued_reads(int layer) {
  std::vector<double> queued(static_cast<size_t>(world_.size()), 0.0);
  if (layer < 0 || layer >= assignment_.rows()) return queued;
  if (!holders_.empty() && holders_.front() == 0) {
    own_resident_.resize(static_cast<size_t>(assignment_.experts()));
    engine_.experts().in_memory(layer, own_resident_);
    std::copy(own_resident_.begin(), own_resident_.end(),
              resident_[0].begin() + static_cast<int64_t>(cell(layer, 0)));
  }
  for (int r : holders_)
    for (int32_t e = 0; e < assignment_.experts(); ++e) {
      uint8_t& asked = ahead_[static_cast<size_t>(r)][cell(layer, e)];
      if (asked && resident_[static_cast<size_t>(r)][cell(layer, e)]) queued[r] += 1;
      asked = 0;  // read by the step being placed, or a wrong guess it passes
    }
  return queued;
}

void ShardedExperts::place(int layer, std::span<const int32_t> ids, bool ahead,
                           std::vector<double>& queued) {
  if (layer < 0 || layer >= assignment_.rows() || ids.empty()) return;
  if (ahead && !holders_.empty() && holders_.front() == 0) {
    // The next layer's: rank 0's own memory of that row as it is now.
    own_resident_.resize(static_cast<size_t>(assignment_.experts()));
    engine_.experts().in_memory(layer, own_resident_);
    std::copy(own_resident_.begin(), own_resident_.end(),
              resident_[0].begin() + static_cast<int64_t>(cell(layer, 0)));
  }
  // A rank left out (serve) neither holds nor owns anything.
  const PlacementView view{holders_,
                           [&](int rank, int32_t e) {
                             return !world_.lost(rank) &&
                                    resident_[static_cast<size_t>(rank)][cell(layer, e)] != 0;
                           },
                           [&](int32_t e) {
                             const int owner = assignment_.owner(layer, e);
                             return world_.lost(owner) ? -1 : owner;
                           }};
  const std::vector<int> ranks = place_experts(ids, view, queued);
  for (size_t i = 0; i < ids.size(); ++i) {
    const size_t at = cell(layer, ids[i]);
    const auto r = static_cast<size_t>(ranks[i]);
    placed_[at] = static_cast<int16_t>(ranks[i]);
    // Until the rank's answer says what it holds: a step's experts stay in
    // its memory, a read ahead is taken (and queued on its drive).
    if (ahead && !resident_[r][at]) ahead_[r][at] = 1;
    resident_[r][at] = 1;
  }
}

bool ShardedExperts::can_cover_without(const std::vector<int>& gone) const {
  const auto is_gone = [&](int r) { return std::find(gone.begin(), gone.end(), r) != gone.end(); };
  if (!least_loaded_)  // rank 0 runs a lost rank's shard itself
    return engine_.profile().distributed.rank0_experts;
  return std::any_of(holders_.begin(), holders_.end(), [&](int r) { return !is_gone(r); });
}

void ShardedExperts::leave_out(const std::vector<int>& gone, const std::string& names,
                               double seconds, const std::string& what) {
  for (int r : gone) {
    world_.mark_lost(r);
    holders_.erase(std::remove(holders_.begin(), holders_.end(), r), holders_.end());
  }
  std::string left;
  if (least_loaded_)
    for (int r : holders_) left += fmt::format("{}{}", left.empty() ? "" : ", ", r);
  const std::string message = fmt::format(
      "{} did not answer within {:g} s (distributed.timeout_seconds) while rank 0 waited for {}: "
      "left out from now on, its experts run on {} (every rank has the model's files); this "
      "request is incomplete",
      names, seconds, what, least_loaded_ ? "rank " + left : std::string("rank 0"));
  warn("{}", message);
  throw RankFault(message);
}

}  // namespace glmrt
