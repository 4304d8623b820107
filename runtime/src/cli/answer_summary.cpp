#include "answer_summary.h"

#include <fmt/format.h>

namespace glmrt::cli {

std::string answer_summary(size_t answer_tokens, const SessionStats& session,
                           const ExpertStoreStats& experts) {
  std::string line = fmt::format("({} token{}", answer_tokens, answer_tokens == 1 ? "" : "s");
  if (session.decoded_tokens > 0 && session.decode_seconds > 0)
    line += fmt::format(", {:.1f} tokens/s", session.decoded_tokens / session.decode_seconds);
  // Slot hits and misses are the cache at work; pinned hits alone are not.
  if (experts.hits + experts.misses > 0)
    line += fmt::format(", expert hit rate {:.1f}%", 100.0 * experts.hit_rate());
  return line + ")";
}

}  // namespace glmrt::cli
