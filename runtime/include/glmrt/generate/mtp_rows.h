// The MTP layer's rows of one sequence, kept in step with the main layers for
// a drafter that runs the MTP layer. Row t pairs the main model's final-normed
// hidden state at position t with token t + 1, so with L tokens in the main
// layers rows 0..L-2 hold verified pairs. Nothing reads a verified pair's
// output, only its cache row (later rows attend to it), so verified pairs are
// absorbed (Model::mtp_absorb: eh_proj and the KV projections, no attention
// output and no MoE, so no expert is read for them). A verified pair waits
// (its hidden state kept here) until a drafter needs the rows, or a prefill
// chunk ends, or enough wait to make a batch worth it; then the waiting pairs
// are absorbed as one batch. Rows a drafter adds past the verified ones run
// in full and are speculative: dropped after verification.
#pragma once

#include <glmrt/kv/kv_cache.h>
#include <glmrt/model/model.h>

#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

class MtpRows {
 public:
  /// Pairs that may wait before a decode step runs them anyway.
  static constexpr int64_t kMaxWaiting = 64;

  explicit MtpRows(Model& model);

  /// Rows holding verified pairs in the cache's MTP layer.
  int64_t verified() const { return verified_; }
  /// Verified pairs not yet run: rows verified()..next_row()-1.
  int64_t waiting() const { return static_cast<int64_t>(waiting_tokens_.size()); }
  /// The row the next verified pair goes to.
  int64_t next_row() const { return verified_ + waiting(); }

  /// Verified pairs for rows first_row.. (h: final-normed states [n, hidden]
  /// at those positions, next_tokens: the token after each). Rows below
  /// next_row() are already known and skipped; first_row must not leave a gap.
  void add_pairs(int64_t first_row, std::span<const float> h, std::span<const int32_t> next_tokens);
  /// Absorbs every waiting pair into the MTP layer's cache as one batch.
  void flush(KvCache& cache);
  /// Flushes when more than kMaxWaiting pairs wait.
  void flush_if_many(KvCache& cache);

  /// Runs the MTP layer for row `position` (a drafter's run_mtp) and returns
  /// its output [hidden] (before shared_head.norm). At next_row() the waiting
  /// pairs are absorbed first, and `verified_pair` (h and token are that
  /// row's true pair) keeps the row after verification; past it, the row
  /// chains on speculative rows (position at most one past the layer's last
  /// row).
  std::vector<float> run(KvCache& cache, int32_t token, int64_t position, std::span<const float> h,
                         bool verified_pair);

  /// The sequence keeps its first `length` tokens: verified and waiting pairs
  /// past row length - 2 go, and so do speculative rows. (A session that then
  /// runs its last token again keeps that token's pair row: next_row() may be
  /// one past the main layers' last row.)
  void truncate(KvCache& cache, int64_t length);

 private:
  void drop_speculative(KvCache& cache);

  Model* model_;  // a pointer: sessions copy the rows to restore them after a failed step
  int64_t verified_ = 0;
  std::vector<int32_t> waiting_tokens_;  // token t + 1 of each waiting row t
  std::vector<float> waiting_h_;         // [waiting, hidden]
};

}  // namespace glmrt
