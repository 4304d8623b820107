// Output that cannot be written: a full disk is an error on stderr with a
// nonzero status, for every command (run/validate/plugins/profile check used
// to exit 0, tokenize/template exited 1 without a word); a reader that went
// away (`| head`) ends the command quietly, as Unix tools do, with status 141
// and not by a signal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "glmrt_process.h"
#include "temp_folder.h"

namespace glmrt::test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

/// ctest runs every parameter of these tests as its own process, in parallel:
/// each process writes its own inputs (or one would read what another is
/// writing), in a folder removed when the process ends.
std::string private_temp_path(const std::string& name) {
  static const test::TempFolder folder("glmrt-cli");
  return (folder / name).string();
}

/// glm_tiny's ref.json cut to its first case: validate in a fraction of a second.
std::string one_case_ref() {
  static const std::string file = [] {
    std::ifstream in(tiny_model() + "/ref.json");
    nlohmann::json ref = nlohmann::json::parse(in);
    ref["cases"] = nlohmann::json::array({ref["cases"][0]});
    const std::string path = private_temp_path("one-case-ref.json");
    std::ofstream(path) << ref.dump();
    return path;
  }();
  return file;
}

std::string request_file() {
  static const std::string file = [] {
    const std::string path = private_temp_path("request.json");
    std::ofstream(path) << R"({"messages": [{"role": "user", "content": "hi"}]})";
    return path;
  }();
  return file;
}

struct Command {
  std::string name;
  std::vector<std::string> args;
  std::string stdin_text = {};
};

std::vector<Command> commands() {
  const std::string tokenizer = tiny_model() + "/tokenizer.json";
  return {
      {"run_ids",
       {"run", "--profile", reference_profile(), "--model", tiny_model(), "--prompt-ids", "1,2,3",
        "-n", "3"}},
      {"run_text",
       {"run", "--profile", reference_profile(), "--model", tiny_model(), "--prompt", "hello", "-n",
        "3", "--ignore-eos"}},
      {"validate_json",
       {"validate", "--profile", reference_profile(), "--model", tiny_model(), "--ref",
        one_case_ref(), "--json"}},
      {"plugins", {"plugins"}},
      {"plugins_json", {"plugins", "--json"}},
      {"profile_check", {"profile", "check", reference_profile()}},
      {"tokenize", {"tokenize", "--tokenizer", tokenizer}, "hello world"},
      {"tokenize_decode", {"tokenize", "--tokenizer", tokenizer, "--decode"}, "[1, 2, 3]"},
      {"template", {"template", "--model", tiny_model(), "--request", request_file()}},
  };
}

class OutputErrors : public ::testing::TestWithParam<Command> {};

TEST_P(OutputErrors, AFullDiskIsAnErrorNamingWhatFailed) {
  const Command& c = GetParam();
  const ProcessResult r = run_glmrt(c.args, Stdout::full_device, c.stdin_text);
  EXPECT_EQ(r.signal, 0) << r.err;
  EXPECT_EQ(r.exit_status, 1) << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("glmrt: error: cannot write"), HasSubstr("to stdout"),
                           HasSubstr("No space left on device")));
}

TEST_P(OutputErrors, AClosedPipeEndsQuietly) {
  const Command& c = GetParam();
  const ProcessResult r = run_glmrt(c.args, Stdout::closed_pipe, c.stdin_text);
  EXPECT_EQ(r.signal, 0) << "ended by signal " << r.signal;
  EXPECT_EQ(r.exit_status, 141) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("error"))) << r.err;
}

TEST_P(OutputErrors, WrittenNormallyTheCommandSucceeds) {
  const Command& c = GetParam();
  const ProcessResult r = run_glmrt(c.args, Stdout::captured, c.stdin_text);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, OutputErrors, ::testing::ValuesIn(commands()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace glmrt::test
