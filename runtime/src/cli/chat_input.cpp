#include "chat_input.h"

#include <poll.h>
#include <unistd.h>

#include <cstdio>

namespace glmrt::cli {

namespace {

constexpr const char* kPrompt = "> ";
constexpr const char* kMorePrompt = ". ";
constexpr std::string_view kBlock = "\"\"\"";

}  // namespace

ChatInput::ChatInput(const std::atomic<bool>& interrupted, bool terminal,
                     std::filesystem::path history_file)
    : terminal_(terminal), reader_(STDIN_FILENO, interrupted) {
  if (terminal_) editor_.emplace(interrupted, std::move(history_file));
}

LineStatus ChatInput::line(const char* prompt, std::string& text) {
  if (editor_) return editor_->read(prompt, text);
  return reader_.read(text);
}

bool ChatInput::input_pending() const {
  pollfd input{STDIN_FILENO, POLLIN, 0};
  return ::poll(&input, 1, 0) > 0 && (input.revents & POLLIN) != 0;
}

LineStatus ChatInput::read(std::string& message) {
  message.clear();
  std::string text;
  LineStatus status = line(kPrompt, text);
  if (status != LineStatus::line) return status;
  const bool block = text == kBlock;
  if (!block) message = text;
  // A line ending in one backslash continues (a doubled one is a backslash).
  auto continues = [](std::string& part) {
    if (!part.ends_with('\\') || part.ends_with("\\\\")) return false;
    part.pop_back();
    return true;
  };
  bool more = block || continues(message) || (terminal_ && input_pending());
  while (more) {
    status = line(kMorePrompt, text);
    if (status == LineStatus::interrupted) return status;
    if (status == LineStatus::end_of_input) break;  // what was gathered is the message
    if (block && text == kBlock) break;
    if (!message.empty() || !block) message += '\n';
    const bool continued = !block && continues(text);
    message += text;
    more = block || continued || (terminal_ && input_pending());
  }
  if (editor_) editor_->remember(message);
  return LineStatus::line;
}

}  // namespace glmrt::cli
