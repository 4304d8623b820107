// Turns generated ids into printable text one id at a time. A character whose
// UTF-8 bytes are spread over several byte-level tokens is held back until it
// is complete, so every returned string is valid UTF-8 and the concatenation
// of all of them (plus flush()) equals tokenizer.decode(all ids). Exceptions,
// where the stream differs from decode() (but stays valid UTF-8), both about
// text holding U+FFFD: with a ByteFallback decoder, byte tokens that end up
// invalid UTF-8 turn their whole run into U+FFFD, bytes already returned
// included; and at most 16 ids are held back, so text still ending in U+FFFD
// after 16 ids (invalid bytes, a model repeating U+FFFD) is returned as it is,
// which keeps every push cheap.
#pragma once

#include <glmrt/text/tokenizer.h>

#include <cstddef>
#include <string>
#include <vector>

namespace glmrt::text {

class StreamDetokenizer {
 public:
  // `tokenizer` must outlive the detokenizer.
  explicit StreamDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens = false);

  // The text that `id` completes (possibly empty).
  std::string push(TokenId id);
  // Whatever is still held (an unfinished character comes out as U+FFFD).
  std::string flush();

 private:
  // Decodes from the last emitted boundary: decoders that look at
  // neighbouring tokens (e.g. stripping a leading space) see the same context
  // as a whole-sequence decode would.
  const Tokenizer& tokenizer_;
  bool skip_special_tokens_;
  std::vector<TokenId> window_;
  std::size_t emitted_ = 0;  // ids in window_ whose text was already returned
};

}  // namespace glmrt::text
