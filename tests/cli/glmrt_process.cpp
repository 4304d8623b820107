#include "glmrt_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

extern char** environ;

namespace glmrt::test {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void check(int status, const char* what) {
  if (status != 0) throw std::runtime_error(std::string(what) + ": " + std::strerror(status));
}

/// posix_spawn file actions, released on scope exit.
class FileActions {
 public:
  FileActions() { check(posix_spawn_file_actions_init(&actions_), "file actions"); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  void open(int fd, const fs::path& file, int flags) {
    check(posix_spawn_file_actions_addopen(&actions_, fd, file.c_str(), flags, 0600), "addopen");
  }
  void dup(int from, int to) {
    check(posix_spawn_file_actions_adddup2(&actions_, from, to), "adddup2");
  }
  void close(int fd) { check(posix_spawn_file_actions_addclose(&actions_, fd), "addclose"); }
  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

ProcessResult spawn_and_wait(const std::string& program, const std::vector<std::string>& args,
                             Stdout out, const std::string& stdin_text, char* const* envp) {
  std::string pattern = (fs::temp_directory_path() / "glmrt-cli-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  const fs::path dir = pattern;
  std::ofstream(dir / "stdin", std::ios::binary) << stdin_text;

  FileActions actions;
  actions.open(STDIN_FILENO, dir / "stdin", O_RDONLY);
  actions.open(STDERR_FILENO, dir / "stderr", O_WRONLY | O_CREAT | O_TRUNC);
  int pipe_ends[2] = {-1, -1};
  switch (out) {
    case Stdout::captured:
      actions.open(STDOUT_FILENO, dir / "stdout", O_WRONLY | O_CREAT | O_TRUNC);
      break;
    case Stdout::full_device:
      actions.open(STDOUT_FILENO, "/dev/full", O_WRONLY);
      break;
    case Stdout::closed_pipe:
      if (::pipe2(pipe_ends, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
      ::close(pipe_ends[0]);  // the reader is gone before anything is written
      actions.dup(pipe_ends[1], STDOUT_FILENO);
      break;
  }

  std::vector<std::string> argv_text = {program};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, program.c_str(), actions.get(), nullptr, argv.data(), envp);
  if (pipe_ends[1] >= 0) ::close(pipe_ends[1]);
  check(spawned, ("posix_spawn " + program).c_str());
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProcessResult result;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (out == Stdout::captured) result.out = read_all(dir / "stdout");
  result.err = read_all(dir / "stderr");
  fs::remove_all(dir);
  return result;
}

}  // namespace

ProcessResult run_glmrt(const std::vector<std::string>& args, Stdout out,
                        const std::string& stdin_text) {
  return spawn_and_wait(GLMRT_EXECUTABLE, args, out, stdin_text, environ);
}

ProcessResult run_with_environment(const std::string& program, const std::vector<std::string>& args,
                                   const std::vector<std::string>& environment) {
  std::vector<std::string> entries = environment;
  std::vector<char*> envp;
  for (std::string& e : entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  return spawn_and_wait(program, args, Stdout::captured, "", envp.data());
}

std::string tiny_model() {
  return (fs::path(GLMRT_SOURCE_DIR) / "tests/fixtures/glm_tiny").string();
}

std::string reference_profile() {
  return (fs::path(GLMRT_SOURCE_DIR) / "configs/reference.yaml").string();
}

}  // namespace glmrt::test
