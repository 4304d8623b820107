// How chat prints an answer that reasons first: the reasoning dimmed on a
// terminal (plain, then a blank line, in a pipe or under NO_COLOR), the
// answer after it, and never the <think> / </think> tags themselves.
#pragma once

#include <glmrt/serve/reasoning_splitter.h>

#include <cstdio>
#include <string>

namespace glmrt::cli {

class ThinkingView {
 public:
  /// `dim`: mark the reasoning with the terminal's faint style.
  /// `starts_in_reasoning`: the prompt ends inside <think>.
  ThinkingView(std::FILE* out, bool dim, bool starts_in_reasoning);

  /// Text of the answer as it streams; throws OutputError when it cannot be
  /// written.
  void push(const std::string& text);
  /// What was held back, and the terminal's style back to normal.
  void finish();

  /// Whether chat's output to `out` may use the faint style: a terminal
  /// other than "dumb", and NO_COLOR unset (no-color.org).
  static bool dim_for(std::FILE* out);

 private:
  void show(const serve::ChatDelta& delta);
  void write(const std::string& text);

  std::FILE* out_;
  bool dim_;
  serve::ReasoningSplitter splitter_;
  bool in_dim_ = false;             // the faint style is on
  bool reasoning_shown_ = false;    // some reasoning was printed
  bool separated_ = false;          // the blank line after the reasoning is out
  bool content_started_ = false;    // the answer after it has begun
  bool reasoning_ended_nl_ = true;  // the last reasoning printed ended a line
};

}  // namespace glmrt::cli
