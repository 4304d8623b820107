// Line editing for the chat on a terminal, by libedit: the arrows and the
// usual Emacs keys move and edit, Up and Down walk the messages sent before
// (kept in a history file across sessions), Ctrl-C at the prompt is told
// apart from the end of input. Pipes and files use LineReader instead.
#pragma once

#include "line_reader.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

struct editline;
struct history;

namespace glmrt::cli {

class LineEditor {
 public:
  /// `interrupted` is the SIGINT flag (SigintScope); it must outlive the
  /// editor. `history_file` empty: the history lives as long as the editor.
  LineEditor(const std::atomic<bool>& interrupted, std::filesystem::path history_file);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  /// One line after showing `prompt`, without its newline.
  LineStatus read(const std::string& prompt, std::string& line);
  /// Adds a sent message to the history (Up recalls it) and saves the file.
  /// A file that cannot be written is reported once on stderr, not fatal.
  void remember(const std::string& message);

  /// Where the history is kept by default: $XDG_STATE_HOME/glmrt/chat_history
  /// (~/.local/state when XDG_STATE_HOME is unset); empty without either.
  static std::filesystem::path default_history_file();

 private:
  static int read_char(editline* el, wchar_t* out);
  static char* show_prompt(editline* el);
  void load_history();
  void save_history();

  struct EditorDeleter {
    void operator()(editline* el) const;
  };
  struct HistoryDeleter {
    void operator()(struct history* h) const;
  };
  const std::atomic<bool>& interrupted_;
  std::filesystem::path history_file_;
  std::unique_ptr<struct history, HistoryDeleter> history_;
  std::unique_ptr<editline, EditorDeleter> editor_;
  std::string prompt_;
  bool read_interrupted_ = false;
  bool save_failed_ = false;
};

}  // namespace glmrt::cli
