// Requests for `glmrt score`, one per line, in either of two forms:
//   the seed program's:  ctx_len cont_len id id id ...   (ctx_len + cont_len ids)
//   JSON Lines:          {"context": "text" | [ids], "continuation": "text" | [ids]}
// Text is encoded the way lm-evaluation-harness does it: trailing whitespace
// of the context moves to the continuation, and the continuation's tokens
// are those the whole text has after the context's, so a BPE merge across
// the boundary is scored as the model would see it.
#pragma once

#include <glmrt/text/tokenizer.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace glmrt {

struct ScoreRequest {
  std::vector<int32_t> tokens;  // context then continuation
  int64_t context_length = 0;   // >= 1: the first token has no prediction
};

/// One request line. Errors (glmrt::Error) name `where` (e.g. "requests.txt:3")
/// and what is wrong. Token ids must be below `vocab_size`.
ScoreRequest parse_score_request(std::string_view line, const text::Tokenizer& tokenizer,
                                 int32_t vocab_size, std::string_view where);

/// Every request of a requests file's `text`; blank lines and lines starting
/// with '#' are skipped. `source` names the input in errors.
std::vector<ScoreRequest> read_score_requests(std::string_view text, std::string_view source,
                                              const text::Tokenizer& tokenizer, int32_t vocab_size);

}  // namespace glmrt
