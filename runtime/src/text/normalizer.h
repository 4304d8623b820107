// tokenizer.json `normalizer` components: text -> text before pre-tokenization.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "component_json.h"

namespace glmrt::text {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual std::string normalize(std::string_view text) const = 0;
};

// nullptr for a null spec. Supported: NFC, NFD, NFKC, NFKD, Lowercase,
// Replace, Prepend, Strip, Sequence; anything else is an error naming it.
std::unique_ptr<Normalizer> make_normalizer(const Json& spec, const JsonPath& where);

}  // namespace glmrt::text
