// tokenizer.json `post_processor` components: what add_special_tokens adds
// around a single sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "component_json.h"

namespace glmrt::text {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Called only when special tokens are requested.
  virtual void add_special_tokens(std::vector<std::uint32_t>& ids,
                                  std::vector<std::string>& tokens) const = 0;
};

// nullptr for a null spec. Supported: ByteLevel (nothing to add),
// TemplateProcessing, BertProcessing, RobertaProcessing, Sequence; anything
// else is an error naming it.
std::unique_ptr<PostProcessor> make_post_processor(const Json& spec, const JsonPath& where);

}  // namespace glmrt::text
