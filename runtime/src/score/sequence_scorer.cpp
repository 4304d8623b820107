#include <glmrt/memory/forward_buffers.h>
#include <glmrt/score/sequence_scorer.h>

#include <algorithm>

namespace glmrt {
namespace {

size_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

TokenScore trimmed(const TokenScore& score, int top_n) {
  TokenScore copy = score;
  if (copy.top.size() > static_cast<size_t>(top_n)) copy.top.resize(static_cast<size_t>(top_n));
  return copy;
}

}  // namespace

SequenceScorer::SequenceScorer(Session& session) : session_(session) {}

SequenceScorer::Scored SequenceScorer::score(std::span<const int32_t> tokens, int top_n,
                                             const std::function<bool()>& cancelled) {
  if (tokens.empty()) fail("score: the sequence has no tokens");
  if (top_n < 0 || top_n > kMaxTopLogprobs)
    fail("score: top_n must be in 0..{}, got {}", kMaxTopLogprobs, top_n);
  const int64_t T = static_cast<int64_t>(tokens.size());
  // Positions 0..r-1 may come from the cache when the scores of tokens 1..r
  // are known: r <= memo_.size(), and those tokens equal the memo's.
  const int64_t memo_match = static_cast<int64_t>(common_prefix(memo_tokens_, tokens));
  const int64_t max_reuse = std::clamp<int64_t>(
      std::min<int64_t>(memo_match - 1, static_cast<int64_t>(memo_.size())), 0, T - 1);

  Model& model = session_.engine().model();
  const int64_t D = model.config().hidden_size, V = model.config().vocab_size;
  // Rows whose logits are computed at once, as the memory plan counts them
  // (GLM-5's vocabulary of 154880 gives ~100 rows).
  const int64_t block = std::max<int64_t>(1, kScoreLogitBlockBytes / (V * int64_t{sizeof(float)}));
  std::vector<TokenScore> computed;  // scores of tokens reused+1 .. T-1
  auto on_rows = [&](int64_t first, std::span<const float> hidden) {
    const int64_t rows = static_cast<int64_t>(hidden.size()) / D;
    // Row p predicts token p + 1; the last position predicts past the end.
    const int64_t scored_rows = std::min(rows, T - 1 - first);
    for (int64_t r0 = 0; r0 < scored_rows; r0 += block) {
      const int64_t n = std::min(block, scored_rows - r0);
      const std::vector<float> logits = model.logits(hidden.subspan(r0 * D, n * D), n);
      for (int64_t r = 0; r < n; ++r) {
        const int64_t position = first + r0 + r;
        computed.push_back(score_logits(std::span(logits).subspan(r * V, V), tokens[position + 1],
                                        kMaxTopLogprobs));
      }
    }
    if (cancelled && cancelled()) throw ScoringCancelled();
  };
  Session::ContextRun run = session_.set_context(tokens, max_reuse, on_rows);

  // The new memo: the kept prefix of the old one, then what was computed.
  memo_.resize(static_cast<size_t>(run.reused));
  memo_.insert(memo_.end(), std::make_move_iterator(computed.begin()),
               std::make_move_iterator(computed.end()));
  memo_tokens_.assign(tokens.begin(), tokens.end());

  Scored result;
  result.reused = run.reused;
  result.next_logits = std::move(run.logits);
  result.scores.reserve(memo_.size());
  for (const TokenScore& s : memo_) result.scores.push_back(trimmed(s, top_n));
  return result;
}

}  // namespace glmrt
