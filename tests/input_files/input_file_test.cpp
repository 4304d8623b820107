// The one reader of whole input files: regular files only (a FIFO refused
// without blocking, a device, a folder), a size cap checked before reading,
// NUL bytes refused in text, absent told apart from unreadable.
#include "temp_folder.h"

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace glmrt {
namespace {

using test::TempFolder;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr InputKind kSmall{"the test file", 1024};

std::string error_reading(const std::filesystem::path& file, const InputKind& kind = kSmall) {
  try {
    read_input_file(file, kind);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(InputFile, ReadsARegularFile) {
  TempFolder dir;
  std::ofstream(dir / "f", std::ios::binary) << "{\"a\": 1}\n";
  EXPECT_EQ(read_input_file(dir / "f", kSmall), "{\"a\": 1}\n");
}

TEST(InputFile, RefusesDevZeroInsteadOfReadingForever) {
  EXPECT_THAT(error_reading("/dev/zero"),
              AllOf(HasSubstr("/dev/zero: cannot read the test file"),
                    HasSubstr("a character device, expected a regular file")));
}

TEST(InputFile, RefusesAFifoWithoutWaitingForAWriter) {
  TempFolder dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_THAT(error_reading(dir / "fifo"),
              AllOf(HasSubstr((dir / "fifo").string()), HasSubstr("a named pipe (FIFO)")));
  // An optional file that is a FIFO is there, so it is an error too.
  EXPECT_THROW(read_input_file_if_present(dir / "fifo", kSmall), Error);
}

TEST(InputFile, RefusesADirectory) {
  TempFolder dir;
  EXPECT_THAT(error_reading(dir.path()), HasSubstr("it is a directory, expected a regular file"));
}

TEST(InputFile, RefusesAnOversizedSparseFileBeforeReadingIt) {
  TempFolder dir;
  const auto file = dir / "sparse";
  std::ofstream(file).close();
  // 1 GiB of holes: nothing is written, and nothing may be read.
  ASSERT_EQ(::truncate(file.c_str(), off_t{1} << 30), 0);
  constexpr InputKind kConfig{"the model config", 16 * kInputMiB};
  EXPECT_THAT(error_reading(file, kConfig),
              AllOf(HasSubstr("holds 1073741824 bytes"), HasSubstr("more than the 16 MiB")));
}

TEST(InputFile, RefusesNulBytesInText) {
  TempFolder dir;
  const auto file = dir / "config.json";
  const std::string text("{\"a\": 1}\n\0\0}}garbage", 20);
  std::ofstream(file, std::ios::binary) << text;
  EXPECT_THAT(error_reading(file),
              AllOf(HasSubstr(file.string()), HasSubstr("byte 9 (line 2) is a NUL byte")));
  // Binary kinds and free text keep them.
  EXPECT_EQ(read_input_file(file, InputKind{"the text", 1024, true}), text);
}

TEST(InputFile, OptionalFilesAreAbsentOnlyWhenNothingIsThere) {
  TempFolder dir;
  EXPECT_FALSE(read_input_file_if_present(dir / "absent", kSmall));
  std::filesystem::create_symlink(dir / "nowhere", dir / "dangling");
  try {
    read_input_file_if_present(dir / "dangling", kSmall);
    FAIL() << "a dangling link was taken for an absent file";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("symbolic link to a file that does not exist"));
  }
  std::filesystem::create_symlink(dir / "loop", dir / "loop");
  EXPECT_THAT(error_reading(dir / "loop"), HasSubstr("its symbolic links form a loop"));
}

TEST(InputFile, StreamsAreCappedToo) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const std::string text(2000, 'x');  // fits the pipe's buffer, more than the cap
  ASSERT_EQ(::write(ends[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(ends[1]);
  try {
    read_input_stream(ends[0], "stdin", kSmall);
    FAIL() << "an oversized stream was read";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("stdin"), HasSubstr("more than 1024 bytes")));
  }
  ::close(ends[0]);
}

TEST(InputLines, SaysWhenTheLastLineIsCut) {
  InputLines whole("a\nb\n");
  std::string_view line;
  while (whole.next(line)) {
  }
  EXPECT_EQ(whole.number(), 2);
  EXPECT_FALSE(whole.last_line_cut());
  InputLines cut("a\nb");
  ASSERT_TRUE(cut.next(line));
  ASSERT_TRUE(cut.next(line));
  EXPECT_EQ(line, "b");
  EXPECT_TRUE(cut.last_line_cut());
  EXPECT_FALSE(cut.next(line));
}

}  // namespace
}  // namespace glmrt
