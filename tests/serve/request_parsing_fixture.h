// The request context the request parsing tests share: glm_tiny's tokenizer
// and chat template, small limits, and the ApiError a body gets.
#pragma once

#include <glmrt/serve/chat_request.h>
#include <glmrt/serve/completion_request.h>
#include <glmrt/serve/request_fields.h>
#include <glmrt/text/chat_template.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace glmrt::serve {

inline const std::filesystem::path kModel = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";

class RequestParsing : public ::testing::Test {
 protected:
  RequestContext context() {
    ServeLimits limits;
    limits.max_messages = 4;
    limits.max_tokens = 100;
    limits.max_batch = 3;
    SamplingParams defaults;
    defaults.temperature = 0.7;
    defaults.max_new_tokens = 50;
    return RequestContext{tokenizer_, chat_template_, 1024, 64, defaults, limits, 42};
  }
  // The ApiError `parse` throws for `body` (status 0 when it does not throw).
  template <typename Parse>
  ApiError error_of(const std::string& body, Parse parse) {
    try {
      parse(parse_request_body(body), context());
    } catch (const ApiError& e) {
      return e;
    }
    return ApiError(0, "", "");
  }
  ApiError chat_error(const std::string& body) { return error_of(body, parse_chat_request); }
  ApiError completion_error(const std::string& body) {
    return error_of(body, parse_completion_request);
  }

  text::Tokenizer tokenizer_ = text::Tokenizer::from_file(kModel / "tokenizer.json");
  text::ModelChatTemplate chat_template_ = text::ModelChatTemplate::for_model(kModel);
};

}  // namespace glmrt::serve
