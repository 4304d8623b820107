// The chat's messages from its input. On a terminal, lines are edited with
// libedit (LineEditor) and lines that arrive together, as a paste does, are
// one message; everywhere, a line ending in a backslash goes on on the next
// line and a line of three double quotes opens a block that another such
// line closes. From a pipe, every other line is a message of its own.
#pragma once

#include "line_editor.h"
#include "line_reader.h"

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>

namespace glmrt::cli {

class ChatInput {
 public:
  /// `terminal`: stdin is a terminal (prompts, line editing, paste joining).
  ChatInput(const std::atomic<bool>& interrupted, bool terminal,
            std::filesystem::path history_file);

  /// The next message (or command) without its final newline.
  LineStatus read(std::string& message);

 private:
  LineStatus line(const char* prompt, std::string& text);
  bool input_pending() const;

  bool terminal_;
  std::optional<LineEditor> editor_;  // on a terminal
  LineReader reader_;                 // otherwise
};

}  // namespace glmrt::cli
