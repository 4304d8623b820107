// tokenizer.json `pre_tokenizer` components: split normalized text into the
// words the model encodes one by one (and, for ByteLevel, respell bytes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "component_json.h"

namespace glmrt::text {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces every piece by its sub-pieces (empty pieces are dropped).
  virtual void pre_tokenize(std::vector<std::string>& pieces) const = 0;
};

// nullptr for a null spec. Supported: Split, ByteLevel, Digits, Sequence;
// anything else is an error naming it.
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& spec, const JsonPath& where);

}  // namespace glmrt::text
