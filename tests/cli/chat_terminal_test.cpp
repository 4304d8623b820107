// `glmrt chat` on a terminal (a pseudo-terminal here): the arrow keys edit
// and recall earlier messages through libedit instead of arriving as "^[[A",
// pasted lines are one message, and the history outlives the session.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "glmrt_process.h"

namespace glmrt::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

size_t times_shown(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// glmrt chat on the slave side of a pseudo-terminal; the test types on the
/// master side and reads what the terminal shows.
class TerminalChat {
 public:
  explicit TerminalChat(const fs::path& history) {
    const std::vector<std::string> args = {
        GLMRT_EXECUTABLE, "chat", "--profile", reference_profile(), "--model",
        tiny_model(),     "-n",   "2",         "--no-thinking",     "--history-file",
        history.string()};
    pid_ = forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      setenv("TERM", "xterm", 1);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~TerminalChat() {
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }
  bool started() const { return pid_ > 0; }

  void type(const std::string& keys) {
    ASSERT_EQ(write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }

  /// Reads until `what` has been shown `times` times in all (20 s at most).
  bool wait_for(const std::string& what, size_t times = 1) {
    return read_until([&] { return times_shown(shown_, what) >= times; });
  }

  /// Reads until the prompt is shown again after the last `marker` shown: a
  /// key typed before the prompt meets the terminal in its line mode, where
  /// Ctrl-D is no key but an end of file that libedit never sees.
  bool wait_for_prompt_after(const std::string& marker) {
    return read_until([&] {
      const size_t at = shown_.rfind(marker);
      return at != std::string::npos && shown_.find("\n> ", at) != std::string::npos;
    });
  }

  int exit_status() {
    int status = 0;
    for (const auto deadline = Clock::now() + std::chrono::seconds(20); Clock::now() < deadline;) {
      char chunk[4096];
      pollfd p{master_, POLLIN, 0};
      if (poll(&p, 1, 50) > 0 && read(master_, chunk, sizeof chunk) > 0) continue;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        waited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
    }
    return -2;
  }
  const std::string& shown() const { return shown_; }

 private:
  bool read_until(const std::function<bool()>& done) {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (!done()) {
      if (Clock::now() > deadline) return false;
      pollfd p{master_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char chunk[4096];
      const ssize_t n = read(master_, chunk, sizeof chunk);
      if (n <= 0) return false;  // the program ended
      shown_.append(chunk, static_cast<size_t>(n));
    }
    return true;
  }

  int master_ = -1;
  pid_t pid_ = -1;
  bool waited_ = false;
  std::string shown_;
};

class ChatTerminal : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_ = fs::temp_directory_path() / ("glmrt-chat-tty-" + std::to_string(getpid()));
  fs::path history_ = dir_ / "state" / "chat_history";
};

constexpr const char* kHelpLine = "/reset  forget the conversation";

TEST_F(ChatTerminal, UpRecallsAMessagePastedLinesAreOneAndTheHistoryIsKept) {
  {
    TerminalChat chat(history_);
    ASSERT_TRUE(chat.started());
    ASSERT_TRUE(chat.wait_for("> ")) << chat.shown();
    chat.type("/help\r");
    ASSERT_TRUE(chat.wait_for_prompt_after(kHelpLine)) << chat.shown();
    chat.type("\x1b[A\r");  // Up, Enter: /help again, not "^[[A"
    ASSERT_TRUE(chat.wait_for(kHelpLine, 2)) << chat.shown();
    ASSERT_TRUE(chat.wait_for_prompt_after(kHelpLine)) << chat.shown();
    EXPECT_THAT(chat.shown(), ::testing::Not(HasSubstr("unknown command")));
    chat.type("one\rtwo\r");  // two lines at once, as a paste arrives
    ASSERT_TRUE(chat.wait_for_prompt_after("tokens")) << chat.shown();  // its line of figures
    chat.type("/stats\r");
    ASSERT_TRUE(chat.wait_for_prompt_after("conversation: ")) << chat.shown();
    EXPECT_THAT(chat.shown(), HasSubstr("conversation: 2 messages")) << chat.shown();
    chat.type("/quit\r");
    EXPECT_EQ(chat.exit_status(), 0) << chat.shown();
  }
  std::ifstream in(history_);
  std::stringstream saved;
  saved << in.rdbuf();
  EXPECT_EQ(saved.str(), "# glmrt chat history\n/help\none\\ntwo\n/stats\n/quit\n");

  TerminalChat again(history_);
  ASSERT_TRUE(again.wait_for("> ")) << again.shown();
  again.type("\x1b[A\x1b[A\x1b[A\x1b[A\r");  // the oldest message of the last session
  ASSERT_TRUE(again.wait_for_prompt_after(kHelpLine)) << again.shown();
  again.type("/quit\r");
  EXPECT_EQ(again.exit_status(), 0) << again.shown();
}

}  // namespace
}  // namespace glmrt::test
