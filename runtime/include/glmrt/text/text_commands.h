// The logic of `glmrt tokenize` and `glmrt template`, kept in glmrt_text so
// it can be tested without the rest of the runtime.
#pragma once

#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/tokenizer.h>

#include <string>
#include <string_view>

namespace glmrt::text {

// `glmrt tokenize`: all of `input` (raw bytes) as one text -> "[1,2,3]".
std::string tokenize_to_json(const Tokenizer& tokenizer, std::string_view input,
                             bool add_special_tokens);

// `glmrt tokenize --decode`: a JSON array of ids -> the decoded text. An id
// outside the vocabulary (negative, past its size, or one no token has) is an
// error naming the element and the vocabulary size.
std::string decode_json_ids(const Tokenizer& tokenizer, std::string_view json_ids);

// `glmrt template`: the prompt for the request body in `request_json`
// (`source` names it in errors).
std::string render_request(const ModelChatTemplate& chat_template, std::string_view request_json,
                           std::string_view source);

}  // namespace glmrt::text
