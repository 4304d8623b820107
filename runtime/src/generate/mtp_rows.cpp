#include <glmrt/base/error.h>
#include <glmrt/generate/mtp_rows.h>

#include <algorithm>

namespace glmrt {

MtpRows::MtpRows(Model& model) : model_(&model) {
  if (!model.has_mtp()) fail("this checkpoint has no MTP layer to keep rows for");
}

void MtpRows::add_pairs(int64_t first_row, std::span<const float> h,
                        std::span<const int32_t> next_tokens) {
  const int64_t D = model_->config().hidden_size;
  const int64_t n = static_cast<int64_t>(next_tokens.size());
  if (first_row > next_row())
    fail("MTP rows: a pair for row {} would leave a gap after row {}", first_row, next_row() - 1);
  const int64_t skip = std::min(n, next_row() - first_row);
  for (int64_t i = skip; i < n; ++i) {
    waiting_tokens_.push_back(next_tokens[i]);
    waiting_h_.insert(waiting_h_.end(), h.begin() + i * D, h.begin() + (i + 1) * D);
  }
}

void MtpRows::drop_speculative(KvCache& cache) {
  cache.truncate_layer(model_->mtp_layer(), verified_);
}

void MtpRows::flush(KvCache& cache) {
  if (waiting_tokens_.empty()) return;
  drop_speculative(cache);
  model_->mtp_absorb(cache, waiting_tokens_, waiting_h_);
  verified_ += waiting();
  waiting_tokens_.clear();
  waiting_h_.clear();
}

void MtpRows::flush_if_many(KvCache& cache) {
  if (waiting() > kMaxWaiting) flush(cache);
}

std::vector<float> MtpRows::run(KvCache& cache, int32_t token, int64_t position,
                                std::span<const float> h, bool verified_pair) {
  const int64_t D = model_->config().hidden_size;
  const int layer = model_->mtp_layer();
  if (position == next_row()) {
    // The waiting pairs leave only their cache rows (no attention output, no
    // MoE: no expert is read for them), then this row runs in full.
    drop_speculative(cache);
    flush(cache);
    std::vector<float> out = model_->mtp_forward(cache, std::span(&token, 1), h.first(D));
    verified_ += verified_pair ? 1 : 0;
    return out;
  }
  if (waiting() > 0 || position < verified_ || position > cache.length(layer))
    fail(
        "MTP row {} cannot run now: rows 0..{} hold verified pairs, the layer holds {} rows and "
        "the next row to run is {} (rows stay contiguous; verified rows are never rewritten)",
        position, verified_ - 1, cache.length(layer), next_row());
  cache.truncate_layer(layer, position);
  return model_->mtp_forward(cache, std::span(&token, 1), h.first(D));
}

void MtpRows::truncate(KvCache& cache, int64_t length) {
  const int64_t last_row = std::max<int64_t>(length - 1, 0);  // rows below it stay
  verified_ = std::min(verified_, last_row);
  const int64_t keep = std::clamp<int64_t>(last_row - verified_, 0, waiting());
  waiting_tokens_.resize(keep);
  waiting_h_.resize(keep * model_->config().hidden_size);
  drop_speculative(cache);
}

}  // namespace glmrt
