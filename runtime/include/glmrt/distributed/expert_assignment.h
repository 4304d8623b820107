// Which rank runs each routed expert of each expert-store row: decided once
// by rank 0 when a model opens, sent to every rank, identical everywhere.
// From the usage history the hot experts of each layer are spread so each
// rank's expected share of the layer's selections is even; without a
// history (or with `distributed.shard: id`) each rank gets a contiguous
// range of expert ids.
#pragma once

#include <glmrt/history/expert_usage.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace glmrt {

class ExpertAssignment {
 public:
  ExpertAssignment() = default;
  /// Contiguous id ranges over `holders` (the ranks that own experts) in
  /// every row `has_experts` marks.
  static ExpertAssignment by_id(const std::vector<bool>& has_experts, int experts,
                                std::span<const int> holders, int ranks);
  /// Per row, the experts most used first, each to the holder whose expected
  /// load (its experts' counts) is least so far, then fewest experts, then
  /// lowest rank; rows without counts by id.
  static ExpertAssignment by_usage(const ExpertUsage& usage, const std::vector<bool>& has_experts,
                                   std::span<const int> holders, int ranks);
  /// As received from rank 0 (checked: every owner a rank, -1 only in rows without experts).
  static ExpertAssignment from_owners(int rows, int experts, int ranks,
                                      std::vector<int16_t> owners);

  /// The rank that runs `expert` of `row`; -1 for a row without routed experts.
  int owner(int row, int32_t expert) const {
    return owners_[static_cast<size_t>(row) * static_cast<size_t>(experts_) +
                   static_cast<size_t>(expert)];
  }
  int rows() const { return rows_; }
  int experts() const { return experts_; }
  int ranks() const { return ranks_; }
  bool from_usage() const { return from_usage_; }
  /// Routed experts of every row `rank` runs.
  int experts_owned(int rank) const;
  /// `rank`'s share of the usage counts (0 without usage).
  double expected_share(int rank) const { return shares_.empty() ? 0 : shares_[rank]; }
  const std::vector<int16_t>& owners() const { return owners_; }
  /// A hash of the owners, for checking that every rank holds the same.
  uint64_t fingerprint() const;
  /// Lines for stderr: how it was made and each rank's experts and share.
  std::string describe() const;

 private:
  ExpertAssignment(int rows, int experts, int ranks);
  int rows_ = 0, experts_ = 0, ranks_ = 0;
  bool from_usage_ = false;
  std::vector<int16_t> owners_;  // [rows, experts]
  std::vector<double> shares_;   // by rank, of the usage counts
};

}  // namespace glmrt
