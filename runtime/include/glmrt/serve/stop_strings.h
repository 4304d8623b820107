// OpenAI's `stop`: generation ends where the generated text first contains
// one of the stop strings, and the text returned ends just before it. Tokens
// do not respect string boundaries ("\n\nUser" may arrive as "\n", "\nUs",
// "er"), so text that could be the start of a stop string is held back until
// the following pieces confirm or refute it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace glmrt::serve {

class StopStringFilter {
 public:
  /// Empty strings are ignored (request parsing refuses them).
  explicit StopStringFilter(std::vector<std::string> stops);

  /// The text that is safe to emit after `piece`. Once a stop string is
  /// complete, returns the text before it and stopped() turns true; later
  /// pieces are dropped.
  std::string push(std::string_view piece);
  /// What is still held back, when generation ended without a stop string.
  std::string flush();
  bool stopped() const { return stopped_; }
  /// The stop string that ended the text (empty until one did).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace glmrt::serve
