#include "thinking_view.h"

#include "output_error.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace glmrt::cli {

namespace {

constexpr const char* kFaint = "\x1b[2m";
constexpr const char* kNormal = "\x1b[22m";

}  // namespace

ThinkingView::ThinkingView(std::FILE* out, bool dim, bool starts_in_reasoning)
    : out_(out), dim_(dim), splitter_(starts_in_reasoning) {}

bool ThinkingView::dim_for(std::FILE* out) {
  const char* term = std::getenv("TERM");
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(fileno(out)) != 0 && !(term && std::strcmp(term, "dumb") == 0) &&
         !(no_color && *no_color);
}

void ThinkingView::push(const std::string& text) {
  show(splitter_.push(text));
}

void ThinkingView::finish() {
  show(splitter_.flush());
  if (in_dim_) write(kNormal);
  in_dim_ = false;
  flush_output(out_, "the answer");
}

void ThinkingView::show(const serve::ChatDelta& delta) {
  if (!delta.reasoning.empty()) {
    if (dim_ && !in_dim_) write(kFaint);
    in_dim_ = dim_;
    write(delta.reasoning);
    reasoning_shown_ = true;
    reasoning_ended_nl_ = delta.reasoning.back() == '\n';
  }
  if (delta.content.empty()) return;
  std::string content = delta.content;
  if (!content_started_) {
    if (in_dim_) write(kNormal);
    in_dim_ = false;
    // The reasoning set apart from the answer by one blank line, however
    // many newlines the model put around </think>.
    if (reasoning_shown_) {
      if (!separated_) write(reasoning_ended_nl_ ? "\n" : "\n\n");
      separated_ = true;
      content.erase(0, content.find_first_not_of('\n'));
      if (content.empty()) return;  // the answer proper starts in a later piece
    }
    content_started_ = true;
  }
  write(content);
}

void ThinkingView::write(const std::string& text) {
  write_output(out_, text, "the answer");
  flush_output(out_, "the answer");
}

}  // namespace glmrt::cli
