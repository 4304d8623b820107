#include <glmrt/base/error.h>
#include <glmrt/generate/session.h>

#include <algorithm>
#include <chrono>

namespace glmrt {

Session::Session(Engine& engine) : engine_(engine), cache_(engine.new_cache()) {}

std::vector<float> Session::run(std::span<const int32_t> tokens, bool prefill,
                                const Model::ChunkSink& on_rows) {
  const auto t0 = std::chrono::steady_clock::now();
  Model& model = engine_.model();
  const int64_t D = model.config().hidden_size;
  // All or nothing: a step that throws (in any chunk) leaves tokens and cache
  // as they were. Only the last position's state is kept, so a long prompt's
  // activations stay within one chunk.
  KvRollback rollback(cache_);
  std::vector<float> last(D);
  const int64_t offset = static_cast<int64_t>(tokens_.size());
  model.forward_chunked(cache_, tokens, engine_.profile().prefill_chunk,
                        [&](int64_t first, std::span<const float> hidden) {
                          if (on_rows) on_rows(offset + first, hidden);
                          std::copy(hidden.end() - D, hidden.end(), last.begin());
                        });
  auto logits = model.logits(last, 1);
  rollback.commit();
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (prefill) {
    stats_.prefilled_tokens += static_cast<int64_t>(tokens.size());
    stats_.prefill_seconds += seconds;
  } else {
    stats_.decoded_tokens += static_cast<int64_t>(tokens.size());
    stats_.decode_seconds += seconds;
  }
  return logits;
}

std::vector<float> Session::set_context(std::span<const int32_t> tokens) {
  return set_context(tokens, std::numeric_limits<int64_t>::max(), {}).logits;
}

Session::ContextRun Session::set_context(std::span<const int32_t> tokens, int64_t max_reuse,
                                         const Model::ChunkSink& on_rows) {
  if (tokens.empty()) fail("cannot run an empty context: the prompt has no tokens");
  size_t common = 0;
  while (common < tokens_.size() && common < tokens.size() && tokens_[common] == tokens[common])
    ++common;
  // The last token must run again to produce its logits.
  if (common == tokens.size()) --common;
  common = static_cast<size_t>(std::clamp<int64_t>(max_reuse, 0, static_cast<int64_t>(common)));
  cache_.truncate(static_cast<int64_t>(common));
  tokens_.resize(common);
  stats_.reused_tokens += static_cast<int64_t>(common);
  ContextRun result;
  result.reused = static_cast<int64_t>(common);
  result.logits = run(tokens.subspan(common), true, on_rows);
  return result;
}

std::vector<float> Session::append(int32_t token) {
  return run(std::span(&token, 1), false);
}

void Session::reset() {
  cache_.truncate(0);
  tokens_.clear();
}

}  // namespace glmrt
