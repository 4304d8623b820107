// The files of a model folder read through the bounded reader by their real
// readers: config.json, generation_config.json, tokenizer_config.json and
// tokenizer.json pointed at /dev/zero, a FIFO or a huge sparse file are
// refused naming the file (never read forever, never waited on), and a NUL
// or trailing bytes after the JSON value are errors.
#include "temp_folder.h"

#include <glmrt/base/error.h>
#include <glmrt/generate/stop_tokens.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/text/tokenizer.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test::TempFolder;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kTiny = fs::path(GLMRT_FIXTURES) / "glm_tiny";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string fixture_text(const std::string& name) {
  std::ifstream in(kTiny / name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The three hostile stand-ins for a file: /dev/zero, a FIFO, 1 GiB of holes.
enum class Hostile { dev_zero, fifo, sparse };

void make_hostile(const fs::path& file, Hostile kind) {
  switch (kind) {
    case Hostile::dev_zero:
      fs::create_symlink("/dev/zero", file);
      break;
    case Hostile::fifo:
      ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
      break;
    case Hostile::sparse:
      std::ofstream(file).close();
      ASSERT_EQ(::truncate(file.c_str(), off_t{1} << 30), 0);
      break;
  }
}

const char* expected_reason(Hostile kind) {
  switch (kind) {
    case Hostile::dev_zero:
      return "a character device";
    case Hostile::fifo:
      return "a named pipe (FIFO)";
    case Hostile::sparse:
      return "holds 1073741824 bytes";
  }
  return "";
}

void PrintTo(Hostile kind, std::ostream* os) {
  *os << (kind == Hostile::dev_zero ? "/dev/zero"
          : kind == Hostile::fifo   ? "a FIFO"
                                    : "1 GiB sparse");
}

class HostileModelFile : public ::testing::TestWithParam<Hostile> {
 protected:
  TempFolder dir_;
};

TEST_P(HostileModelFile, GenerationConfigIsRefused) {
  const auto file = dir_ / "generation_config.json";
  make_hostile(file, GetParam());
  EXPECT_THAT(error_of([&] { resolve_sampling(dir_.path(), Profile{}); }),
              AllOf(HasSubstr(file.string()), HasSubstr(expected_reason(GetParam()))));
}

TEST_P(HostileModelFile, TokenizerConfigIsRefused) {
  const ModelConfig config = load_model_config(kTiny);
  const auto file = dir_ / "tokenizer_config.json";
  make_hostile(file, GetParam());
  EXPECT_THAT(error_of([&] { stop_token_ids(config, dir_.path()); }),
              AllOf(HasSubstr(file.string()), HasSubstr(expected_reason(GetParam()))));
}

TEST_P(HostileModelFile, TokenizerIsRefused) {
  const auto file = dir_ / "tokenizer.json";
  make_hostile(file, GetParam());
  EXPECT_THAT(error_of([&] { text::Tokenizer::from_file(file); }),
              AllOf(HasSubstr(file.string()), HasSubstr(expected_reason(GetParam()))));
}

TEST_P(HostileModelFile, ModelConfigIsRefused) {
  const auto file = dir_ / "config.json";
  make_hostile(file, GetParam());
  EXPECT_THAT(error_of([&] { load_model_config(dir_.path()); }),
              AllOf(HasSubstr(file.string()), HasSubstr(expected_reason(GetParam()))));
}

INSTANTIATE_TEST_SUITE_P(Kinds, HostileModelFile,
                         ::testing::Values(Hostile::dev_zero, Hostile::fifo, Hostile::sparse),
                         [](const auto& info) {
                           return std::string(info.param == Hostile::dev_zero ? "dev_zero"
                                              : info.param == Hostile::fifo   ? "fifo"
                                                                              : "sparse");
                         });

TEST(ModelFolderReads, BytesAfterANulInConfigJsonAreAnError) {
  TempFolder dir;
  std::string text = fixture_text("config.json");
  ASSERT_FALSE(text.empty());
  while (!text.empty() && text.back() != '}') text.pop_back();  // the value ends the text
  std::ofstream(dir / "config.json", std::ios::binary) << text << std::string("\0\0}}garbage", 11);
  EXPECT_THAT(error_of([&] { load_model_config(dir.path()); }),
              AllOf(HasSubstr((dir / "config.json").string()), HasSubstr("NUL byte")));
  // Without the NUL, the parser sees the garbage itself.
  std::ofstream(dir / "config.json", std::ios::binary) << text << "}}garbage";
  EXPECT_THAT(error_of([&] { load_model_config(dir.path()); }),
              AllOf(HasSubstr((dir / "config.json").string()), HasSubstr("not valid JSON")));
}

TEST(ModelFolderReads, AbsentOptionalFilesAreFine) {
  TempFolder dir;
  EXPECT_NO_THROW(resolve_sampling(dir.path(), Profile{}));
  EXPECT_NO_THROW(stop_token_ids(load_model_config(kTiny), dir.path()));
}

}  // namespace
}  // namespace glmrt
