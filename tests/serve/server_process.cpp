#include "server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace glmrt::test {
namespace {

// The port of the startup line "glmrt serve: ... on http://HOST:PORT/ ...",
// or 0 (an error such as "cannot listen on http://..." is not one). (No
// std::regex: GCC 12 warns inside it under ASan, and warnings are errors.)
int listening_port(const std::string& log) {
  for (size_t line = log.find("glmrt serve: "); line != std::string::npos;
       line = log.find("glmrt serve: ", line + 1)) {
    const size_t at = log.find(" on http://", line);
    const size_t end = log.find('\n', line);
    if (at == std::string::npos || end == std::string::npos || end < at) continue;
    const size_t slash = log.find('/', at + 11);
    const size_t colon = log.rfind(':', slash);
    if (slash == std::string::npos || colon == std::string::npos || colon < at) return 0;
    int port = 0;
    for (size_t i = colon + 1; i < slash; ++i) {
      if (log[i] < '0' || log[i] > '9') return 0;
      port = port * 10 + (log[i] - '0');
    }
    return port;
  }
  return 0;
}

}  // namespace

ServerProcess::ServerProcess(const std::vector<std::string>& args, bool access_log) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> argv_text = {std::string(GLMRT_BUILD_DIR) + "/glmrt", "serve"};
  if (std::find(args.begin(), args.end(), "--port") == args.end())
    argv_text.insert(argv_text.end(), {"--port", "0"});
  if (!access_log) argv_text.push_back("--quiet");
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  stderr_fd_ = pipe_fds[0];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{stderr_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(stderr_fd_, buffer, sizeof buffer);
    if (n <= 0) break;  // exited
    log_.append(buffer, static_cast<size_t>(n));
    if (const int port = listening_port(log_); port > 0) {
      port_ = port;
      fcntl(stderr_fd_, F_SETFL, fcntl(stderr_fd_, F_GETFL) | O_NONBLOCK);
      return;
    }
  }
  const int status = stop();
  throw std::runtime_error("glmrt serve did not start (exit status " + std::to_string(status) +
                           "):\n" + log_);
}

void ServerProcess::drain() {
  if (stderr_fd_ < 0) return;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(stderr_fd_, buffer, sizeof buffer)) > 0)
    log_.append(buffer, static_cast<size_t>(n));
}

const std::string& ServerProcess::log() {
  drain();
  return log_;
}

bool ServerProcess::wait_for_log(const std::string& text) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (log().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) stop();
  if (stderr_fd_ >= 0) close(stderr_fd_);
}

int ServerProcess::stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  pid_t done = 0;
  while ((done = waitpid(pid_, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    // Keep its stderr pipe drained so it never blocks writing to it.
    drain();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (done == 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return -1;
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace glmrt::test
