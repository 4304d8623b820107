// `glmrt serve` of this build tree as a child process: started on a free
// loopback port (--port 0; the port is read from its startup line), stopped
// with SIGTERM, its exit status checked by the caller.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace glmrt::test {

class ServerProcess {
 public:
  /// Runs GLMRT_BUILD_DIR/glmrt serve --port 0 --quiet `args...` (without
  /// --quiet when `access_log`, without --port 0 when `args` give --port) and
  /// waits (up to a minute) until it listens. Throws with its exit status and
  /// stderr otherwise.
  explicit ServerProcess(const std::vector<std::string>& args, bool access_log = false);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  /// SIGTERM, then the exit status (-1 when killed by a signal or after 30 s).
  int stop();
  /// Everything it wrote to stderr so far.
  const std::string& log();
  /// Waits (up to 10 s) until its stderr holds `text`; false when it never does.
  bool wait_for_log(const std::string& text);

 private:
  void drain();

  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  int port_ = 0;
  std::string log_;
};

}  // namespace glmrt::test
