#include "line_editor.h"

#include <glmrt/base/atomic_file.h>
#include <glmrt/base/error.h>

#include <fmt/format.h>
#include <histedit.h>
#include <langinfo.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cwchar>
#include <fstream>

namespace glmrt::cli {

namespace {

constexpr int kHistorySize = 1000;
constexpr std::string_view kHistoryHeader = "# glmrt chat history\n";

// One message per line: a message's own newlines and backslashes escaped.
std::string escape(const std::string& message) {
  std::string out;
  for (const char c : message) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string unescape(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      out += line[i + 1] == 'n' ? '\n' : line[i + 1];
      ++i;
    } else {
      out += line[i];
    }
  }
  return out;
}

}  // namespace

void LineEditor::EditorDeleter::operator()(editline* el) const {
  el_end(el);
}
void LineEditor::HistoryDeleter::operator()(struct history* h) const {
  history_end(h);
}

std::filesystem::path LineEditor::default_history_file() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state)
    return std::filesystem::path(state) / "glmrt" / "chat_history";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".local" / "state" / "glmrt" / "chat_history";
  return {};
}

LineEditor::LineEditor(const std::atomic<bool>& interrupted, std::filesystem::path history_file)
    : interrupted_(interrupted), history_file_(std::move(history_file)), history_(history_init()) {
  if (!history_) fail("cannot start the line editor's history (libedit)");
  // libedit edits characters, not bytes, in the locale's encoding: UTF-8,
  // which the terminal's locale names or C.UTF-8 stands in for.
  std::setlocale(LC_CTYPE, "");
  if (std::string_view(nl_langinfo(CODESET)) != "UTF-8") std::setlocale(LC_CTYPE, "C.UTF-8");
  HistEvent event;
  ::history(history_.get(), &event, H_SETSIZE, kHistorySize);
  ::history(history_.get(), &event, H_SETUNIQUE, 1);  // the same message twice in a row: once
  editor_.reset(el_init("glmrt", stdin, stderr, stderr));
  if (!editor_) fail("cannot start the line editor (libedit) on this terminal");
  el_set(editor_.get(), EL_CLIENTDATA, this);
  el_set(editor_.get(), EL_EDITOR, "emacs");
  el_set(editor_.get(), EL_HIST, ::history, history_.get());
  el_set(editor_.get(), EL_PROMPT, &LineEditor::show_prompt);
  el_set(editor_.get(), EL_GETCFN, &LineEditor::read_char);
  el_source(editor_.get(), nullptr);  // the user's ~/.editrc, as other libedit programs
  load_history();
}

LineEditor::~LineEditor() = default;

char* LineEditor::show_prompt(editline* el) {
  LineEditor* self = nullptr;
  el_get(el, EL_CLIENTDATA, &self);
  return self->prompt_.data();
}

// Reads the terminal itself, byte by byte, so that a Ctrl-C (the SIGINT
// handler is installed without SA_RESTART) ends the read instead of being
// retried inside libedit, and nothing is buffered beyond the line.
int LineEditor::read_char(editline* el, wchar_t* out) {
  LineEditor* self = nullptr;
  el_get(el, EL_CLIENTDATA, &self);
  std::mbstate_t state{};
  for (;;) {
    char byte = 0;
    const ssize_t n = ::read(STDIN_FILENO, &byte, 1);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno != EINTR) return -1;
      if (self->interrupted_.load()) {
        self->read_interrupted_ = true;
        return -1;
      }
      continue;
    }
    const size_t got = std::mbrtowc(out, &byte, 1, &state);
    if (got == static_cast<size_t>(-2)) continue;  // more bytes of one character
    if (got == static_cast<size_t>(-1)) {          // not the locale's encoding
      state = {};
      *out = L'?';
    }
    return 1;
  }
}

LineStatus LineEditor::read(const std::string& prompt, std::string& line) {
  prompt_ = prompt;
  read_interrupted_ = false;
  int count = 0;
  const char* got = el_gets(editor_.get(), &count);
  if (!got || count <= 0) {
    if (read_interrupted_ || interrupted_.load()) return LineStatus::interrupted;
    return LineStatus::end_of_input;
  }
  line.assign(got, static_cast<size_t>(count));
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return LineStatus::line;
}

void LineEditor::remember(const std::string& message) {
  if (message.empty()) return;
  HistEvent event;
  ::history(history_.get(), &event, H_ENTER, message.c_str());
  if (!history_file_.empty()) save_history();
}

void LineEditor::load_history() {
  if (history_file_.empty()) return;
  std::ifstream in(history_file_);
  std::string line;
  if (!std::getline(in, line) || line + '\n' != kHistoryHeader) return;  // none yet, or not ours
  HistEvent event;
  while (std::getline(in, line))
    if (!line.empty()) ::history(history_.get(), &event, H_ENTER, unescape(line).c_str());
}

void LineEditor::save_history() {
  // Oldest first: walk from the last (oldest) entry towards the newest.
  std::string text(kHistoryHeader);
  HistEvent event;
  for (int ok = ::history(history_.get(), &event, H_LAST); ok >= 0;
       ok = ::history(history_.get(), &event, H_PREV))
    text += escape(event.str) + '\n';
  try {
    std::filesystem::create_directories(history_file_.parent_path());
    OutputRule rule;
    rule.kind.what = "a glmrt chat history";
    rule.kind.recognises = [](const std::filesystem::path& file) {
      return read_file_head(file, kHistoryHeader.size()) == kHistoryHeader;
    };
    AtomicFile out(history_file_, rule);
    out.write(text);
    out.commit();
  } catch (const std::exception& e) {
    if (!save_failed_)
      fmt::print(stderr, "glmrt chat: warning: the history is not kept: {}\n", e.what());
    save_failed_ = true;
  }
}

}  // namespace glmrt::cli
