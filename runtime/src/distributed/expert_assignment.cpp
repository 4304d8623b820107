#include <glmrt/base/error.h>
#include <glmrt/distributed/expert_assignment.h>

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace glmrt {

ExpertAssignment::ExpertAssignment(int rows, int experts, int ranks)
    : rows_(rows),
      experts_(experts),
      ranks_(ranks),
      owners_(static_cast<size_t>(rows) * static_cast<size_t>(experts), -1) {}

ExpertAssignment ExpertAssignment::by_id(const std::vector<bool>& has_experts, int experts,
                                         std::span<const int> holders, int ranks) {
  if (holders.empty()) fail("expert assignment: no rank holds experts");
  ExpertAssignment a(static_cast<int>(has_experts.size()), experts, ranks);
  const int64_t H = static_cast<int64_t>(holders.size());
  for (int row = 0; row < a.rows_; ++row) {
    if (!has_experts[row]) continue;
    for (int e = 0; e < experts; ++e)
      a.owners_[static_cast<size_t>(row) * experts + e] =
          static_cast<int16_t>(holders[static_cast<size_t>(int64_t(e) * H / experts)]);
  }
  return a;
}

ExpertAssignment ExpertAssignment::by_usage(const ExpertUsage& usage,
                                            const std::vector<bool>& has_experts,
                                            std::span<const int> holders, int ranks) {
  ExpertAssignment a = by_id(has_experts, usage.experts(), holders, ranks);
  if (usage.empty()) return a;
  a.from_usage_ = true;
  a.shares_.assign(static_cast<size_t>(ranks), 0.0);
  const int E = usage.experts();
  std::vector<uint64_t> load(static_cast<size_t>(ranks));
  std::vector<int> owned(static_cast<size_t>(ranks));
  for (int row = 0; row < a.rows_ && row < usage.layers(); ++row) {
    if (!has_experts[row] || usage.layer_total(row) == 0) continue;
    std::fill(load.begin(), load.end(), 0);
    std::fill(owned.begin(), owned.end(), 0);
    // Most used first, then the never-used ones by id: each to the least
    // loaded holder (ties: fewer experts, then the lower rank).
    std::vector<int> order = usage.ranked_in_layer(row);
    std::vector<bool> seen(static_cast<size_t>(E));
    for (int e : order) seen[e] = true;
    for (int e = 0; e < E; ++e)
      if (!seen[e]) order.push_back(e);
    for (int e : order) {
      const int to = *std::min_element(holders.begin(), holders.end(), [&](int x, int y) {
        return std::tuple(load[x], owned[x], x) < std::tuple(load[y], owned[y], y);
      });
      a.owners_[static_cast<size_t>(row) * E + e] = static_cast<int16_t>(to);
      load[to] += usage.count(row, e);
      ++owned[to];
    }
    for (int r = 0; r < ranks; ++r) a.shares_[r] += double(load[r]) / double(usage.total());
  }
  return a;
}

ExpertAssignment ExpertAssignment::from_owners(int rows, int experts, int ranks,
                                               std::vector<int16_t> owners) {
  if (owners.size() != static_cast<size_t>(rows) * static_cast<size_t>(experts))
    fail("expert assignment: {} owners for {} rows of {} experts", owners.size(), rows, experts);
  for (int16_t o : owners)
    if (o < -1 || o >= ranks)
      fail("expert assignment: owner {} is not a rank (0..{})", o, ranks - 1);
  ExpertAssignment a(rows, experts, ranks);
  a.owners_ = std::move(owners);
  return a;
}

int ExpertAssignment::experts_owned(int rank) const {
  return static_cast<int>(std::count(owners_.begin(), owners_.end(), rank));
}

uint64_t ExpertAssignment::fingerprint() const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the owners and the shape
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  mix(static_cast<uint64_t>(rows_));
  mix(static_cast<uint64_t>(experts_));
  for (int16_t o : owners_) mix(static_cast<uint64_t>(static_cast<uint16_t>(o)));
  return h;
}

std::string ExpertAssignment::describe() const {
  std::string text = fmt::format(
      "routed experts over {} ranks ({}, assignment {:016x}):", ranks_,
      from_usage_ ? "even expected load from the usage history" : "contiguous expert ids",
      fingerprint());
  for (int r = 0; r < ranks_; ++r) {
    text += fmt::format("\n  rank {}: {} experts", r, experts_owned(r));
    if (from_usage_) text += fmt::format(", {:.1f}% of the recorded selections", 100 * shares_[r]);
  }
  return text;
}

}  // namespace glmrt
