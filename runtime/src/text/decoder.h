// tokenizer.json `decoder` components: token strings back to text.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "component_json.h"

namespace glmrt::text {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Transforms the token strings in place (the library's decode_chain).
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

// nullptr for a null spec. Supported: ByteLevel, ByteFallback, Fuse, Strip,
// Replace, Sequence; anything else is an error naming it.
std::unique_ptr<Decoder> make_decoder(const Json& spec, const JsonPath& where);

}  // namespace glmrt::text
