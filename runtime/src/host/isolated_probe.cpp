#include "isolated_probe.h"

#include "loaded_library.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The child's answer: one tag byte, then the fields, each text as its
// length (4 bytes) and bytes, each number as 4 bytes.
constexpr char kProbedTag = 'P';
constexpr char kRefusedTag = 'R';
constexpr size_t kMaxAnswerBytes = 1 << 20;

void append_number(std::string& out, int32_t value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void append_text(std::string& out, std::string_view text) {
  append_number(out, static_cast<int32_t>(text.size()));
  out.append(text);
}

class AnswerReader {
 public:
  explicit AnswerReader(std::string_view bytes) : rest_(bytes) {}
  int32_t number() {
    int32_t value = 0;
    if (rest_.size() < sizeof value) {
      complete_ = false;
      return 0;
    }
    std::memcpy(&value, rest_.data(), sizeof value);
    rest_.remove_prefix(sizeof value);
    return value;
  }
  std::string text() {
    const int32_t size = number();
    if (size < 0 || static_cast<size_t>(size) > rest_.size()) {
      complete_ = false;
      return {};
    }
    std::string value(rest_.substr(0, static_cast<size_t>(size)));
    rest_.remove_prefix(static_cast<size_t>(size));
    return value;
  }
  bool complete() const { return complete_ && rest_.empty(); }

 private:
  std::string_view rest_;
  bool complete_ = true;
};

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

/// The child: loads and probes `file`, answers on `answer_fd`, and ends
/// without unloading the plugin or running the host's exit handlers.
[[noreturn]] void probe_and_answer(const fs::path& file, int answer_fd) {
  // A crash is reported as its signal: no handler inherited from the host runs.
  for (const int crash : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::signal(crash, SIG_DFL);
  // What a plugin prints must not land in the host's stdout (`--json`).
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  std::string answer;
  try {
    LoadedLibrary library(file);
    const PluginInfo info = library.describe();
    answer += kProbedTag;
    append_text(answer, info.kind);
    append_text(answer, info.name);
    append_text(answer, info.version);
    append_number(answer, info.abi_major);
    append_number(answer, info.abi_minor);
    append_text(answer, info.description);
    append_number(answer, info.score);
    append_number(answer, info.supported ? 1 : 0);
    append_text(answer, info.reason);
    write_all(answer_fd, answer);
    ::_exit(0);
  } catch (const std::exception& e) {
    answer = kRefusedTag;
    append_text(answer, e.what());
  } catch (...) {
    answer = kRefusedTag;
    append_text(answer,
                fmt::format("{}: probing it threw an unknown exception", printable(file.string())));
  }
  write_all(answer_fd, answer);
  ::_exit(0);
}

/// Reads `fd` to its end; false when `deadline` passes first.
bool read_to_end(int fd, Clock::time_point deadline, std::string& out) {
  char buffer[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (out.size() < kMaxAnswerBytes) out.append(buffer, static_cast<size_t>(n));
  }
}

/// Waits for `child` until `deadline`; false when it is still running then.
/// A status of 0 stands in when the child was reaped elsewhere (SIGCHLD ignored).
bool wait_for(pid_t child, Clock::time_point deadline, int& status) {
  constexpr auto kLongestPause = std::chrono::microseconds(20'000);
  for (auto pause = std::chrono::microseconds(100);; pause = std::min(pause * 2, kLongestPause)) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) return true;
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) {
      status = 0;
      return true;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
  }
}

class PipeEnd {
 public:
  explicit PipeEnd(int fd) : fd_(fd) {}
  PipeEnd(const PipeEnd&) = delete;
  PipeEnd& operator=(const PipeEnd&) = delete;
  ~PipeEnd() { close(); }
  int get() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::string signal_name(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  const char* description = sigdescr_np(signal);
  return abbreviation ? fmt::format("SIG{} ({})", abbreviation, description ? description : "")
                      : fmt::format("signal {}", signal);
}

PluginInfo read_answer(const fs::path& file, const std::string& shown, std::string_view answer) {
  if (answer.empty()) fail("{}: refused: the process probing it ended without answering", shown);
  AnswerReader reader(answer.substr(1));
  if (answer[0] == kRefusedTag) {
    std::string message = reader.text();
    if (reader.complete()) throw Error(message);
  } else if (answer[0] == kProbedTag) {
    PluginInfo info;
    info.path = file;
    info.kind = reader.text();
    info.name = reader.text();
    info.version = reader.text();
    info.abi_major = reader.number();
    info.abi_minor = reader.number();
    info.abi = fmt::format("{}.{}", info.abi_major, info.abi_minor);
    info.description = reader.text();
    info.score = reader.number();
    info.supported = reader.number() != 0;
    info.reason = reader.text();
    if (reader.complete()) return info;
  }
  fail("{}: refused: the process probing it sent a malformed answer", shown);
}

}  // namespace

PluginInfo probe_in_child(const fs::path& file, std::chrono::milliseconds timeout) {
  const std::string shown = printable(file.string());
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    fail("{}: cannot probe the plugin in a child process: {}", shown, std::strerror(errno));
  PipeEnd reader(fds[0]), writer(fds[1]);
  // Whatever the host has buffered must not be written twice by the child.
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = ::fork();
  if (child < 0)
    fail("{}: cannot probe the plugin in a child process: {}", shown, std::strerror(errno));
  if (child == 0) {
    reader.close();
    probe_and_answer(file, writer.get());
  }
  writer.close();
  const auto deadline = Clock::now() + timeout;
  std::string answer;
  int status = 0;
  if (!read_to_end(reader.get(), deadline, answer) || !wait_for(child, deadline, status)) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    fail("{}: refused: its probe did not finish within {:g} s (the process probing it was killed)",
         shown, std::chrono::duration<double>(timeout).count());
  }
  if (WIFSIGNALED(status))
    fail("{}: refused: the plugin crashed while being probed (in a child process): {}", shown,
         signal_name(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    fail("{}: refused: the process probing it exited with status {} before answering", shown,
         WEXITSTATUS(status));
  return read_answer(file, shown, answer);
}

}  // namespace glmrt
