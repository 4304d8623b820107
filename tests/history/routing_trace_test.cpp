// Routing traces: written step by step, read back exactly; malformed ones
// refused naming the line.
#include "temp_folder.h"

#include <glmrt/base/error.h>
#include <glmrt/history/routing_trace.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

namespace glmrt {
namespace {

using test::TempFolder;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(RoutingTrace, WrittenAndReadBack) {
  TempFolder dir;
  const auto file = dir.path() / "trace";
  {
    RoutingTraceWriter w(file, "abc", RoutingShape{5, 16, 2});
    const int32_t step1[] = {3, 4, 4, 9};
    const int32_t step2[] = {15, 0};
    w.on_routed(1, 2, step1);
    w.on_routed(4, 1, step2);
    w.close();
  }
  const RoutingTrace t = read_routing_trace(file);
  EXPECT_EQ(t.model_id, "abc");
  EXPECT_EQ(t.layers, 5);
  EXPECT_EQ(t.experts, 16);
  EXPECT_EQ(t.top_k, 2);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[0].layer, 1);
  EXPECT_EQ(t.steps[0].positions, 2);
  EXPECT_EQ(t.steps[0].experts, (std::vector<int32_t>{3, 4, 4, 9}));
  EXPECT_EQ(t.usage().count(1, 4), 2u);
  EXPECT_EQ(t.usage().count(4, 15), 1u);
}

TEST(RoutingTrace, MalformedTraceNamesTheLine) {
  TempFolder dir;
  const auto file = dir.path() / "bad";
  std::ofstream(file) << "glmrt-routing-trace 2\nmodel x\nshape 2 4 2\n1 1 0 1\n1 1 0 7\nend 2\n";
  try {
    read_routing_trace(file);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(":5:"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("expert 7 out of range"));
  }
  std::ofstream(file) << "glmrt-routing-trace 2\nmodel x\nshape 2 4 2\n1 2 0 1\nend 1\n";
  EXPECT_THROW(read_routing_trace(file), Error);  // 2 positions need 4 ids
  std::ofstream(file) << "something else\n";
  EXPECT_THROW(read_routing_trace(file), Error);
}

std::string error_reading(const std::filesystem::path& file, const std::string& text,
                          const std::optional<RoutingShape>& expected = std::nullopt) {
  std::ofstream(file, std::ios::binary) << text;
  try {
    read_routing_trace(file, expected);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr const char* kHeader = "glmrt-routing-trace 2\nmodel x\nshape 2 4 2\n";

TEST(RoutingTrace, AHugeShapeIsRefusedBeforeAnythingIsAllocated) {
  TempFolder dir;
  const auto file = dir.path() / "huge";
  // 10^10 cells: the replay's tables took every byte of memory.
  EXPECT_THAT(error_reading(file, "glmrt-routing-trace 2\nmodel x\nshape 100000 100000 8\nend 0\n"),
              AllOf(HasSubstr(file.string() + ":3:"), HasSubstr("larger than any model's")));
  EXPECT_THAT(error_reading(file, "glmrt-routing-trace 2\nmodel x\nshape 2 4 5\nend 0\n"),
              HasSubstr("5 experts per token, but only 4 experts"));
  // A step declaring more positions than its line can hold reserves nothing.
  EXPECT_THAT(error_reading(file, std::string(kHeader) + "1 1000000000000 0 1\nend 1\n"),
              AllOf(HasSubstr(":4:"), HasSubstr("the line holds at most")));
}

TEST(RoutingTrace, AnotherModelsShapeIsRefusedWhenTheModelIsKnown) {
  TempFolder dir;
  const std::string trace = std::string(kHeader) + "1 1 0 1\nend 1\n";
  EXPECT_THAT(error_reading(dir.path() / "t", trace, RoutingShape{5, 16, 4}),
              HasSubstr("is not the model's 5 x 16, top-4"));
  EXPECT_EQ(error_reading(dir.path() / "t", trace, RoutingShape{2, 4, 2}), "(no error)");
}

TEST(RoutingTrace, AnExpertTwiceInOnePositionIsRefused) {
  TempFolder dir;
  const auto file = dir.path() / "dup";
  EXPECT_THAT(error_reading(file, std::string(kHeader) + "1 1 0 1\n0 2 1 3 2 2\nend 2\n"),
              AllOf(HasSubstr(file.string() + ":5:"),
                    HasSubstr("expert 2 is chosen twice for position 1")));
  // The same expert in two positions of a step is fine.
  EXPECT_EQ(error_reading(file, std::string(kHeader) + "0 2 1 3 3 1\nend 1\n"), "(no error)");
}

TEST(RoutingTrace, TrailingGarbageIsRefused) {
  TempFolder dir;
  const auto file = dir.path() / "garbage";
  EXPECT_THAT(
      error_reading(file, std::string(kHeader) + "1 1 0 1 garbage\nend 1\n"),
      AllOf(HasSubstr(file.string() + ":4:"), HasSubstr("`garbage` after the 2 expert ids")));
  EXPECT_THAT(error_reading(file, std::string(kHeader) + "1 1 0 1x\nend 1\n"),
              HasSubstr("`1x` is not an expert id"));
  EXPECT_THAT(error_reading(file, "glmrt-routing-trace 2 extra\nmodel x\nshape 2 4 2\nend 0\n"),
              HasSubstr(":1:"));
  EXPECT_THAT(error_reading(file, std::string(kHeader) + "1 1 0 1\nend 1\n1 1 0 1\n"),
              HasSubstr("bytes after the `end` line"));
}

TEST(RoutingTrace, ACutTraceIsRefused) {
  TempFolder dir;
  const auto file = dir.path() / "cut";
  // Cut mid-line: "1 1 0 1" of "1 1 0 13" would pass for a whole step.
  EXPECT_THAT(error_reading(file, std::string(kHeader) + "1 1 2 3\n1 1 0 1"),
              AllOf(HasSubstr(file.string() + ":5:"), HasSubstr("cut short")));
  // Cut at a line boundary: the end line is missing.
  EXPECT_THAT(error_reading(file, std::string(kHeader) + "1 1 2 3\n"),
              HasSubstr("without its `end` line"));
  EXPECT_THAT(error_reading(file, std::string(kHeader) + "1 1 2 3\nend 2\n"),
              HasSubstr("the end line counts 2 steps, the trace holds 1"));
  EXPECT_THAT(error_reading(file, "glmrt-routing-trace 2\nmodel x\n"),
              HasSubstr("stops before its shape line"));
}

TEST(RoutingTrace, VersionOneTracesStillRead) {
  TempFolder dir;
  const auto file = dir.path() / "v1";
  std::ofstream(file) << "glmrt-routing-trace 1\nmodel x\nshape 2 4 2\n1 1 0 1\n";
  ::testing::internal::CaptureStderr();
  const RoutingTrace t = read_routing_trace(file);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("no end line"));
  EXPECT_EQ(t.steps.size(), 1u);
}

/// Entries of `folder` (the temporary files a writer may leave).
int entries_in(const std::filesystem::path& folder) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(folder)) ++n;
  return n;
}

std::string content_of(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(RoutingTraceWriter, AFailedWriteIsReportedWithItsReasonAndReplacesNothing) {
  TempFolder dir;
  const auto file = dir.path() / "trace";
  const std::string old_trace = std::string(kHeader) + "end 0\n";
  std::ofstream(file) << old_trace;
  // A file size limit makes write(2) fail with EFBIG as a full disk fails
  // with ENOSPC (SIGXFSZ ignored, as a real full disk sends no signal).
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  std::string error = "(no error)";
  {
    RoutingTraceWriter w(file, "abc", RoutingShape{2, 4, 2});
    struct rlimit small = saved;
    small.rlim_cur = 4096;  // the trace passes it; a captured warning stays below it
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const int32_t ids[] = {0, 1, 2, 3, 1, 2, 0, 3};
    ::testing::internal::CaptureStderr();
    for (int step = 0; step < 400; ++step) w.on_routed(step % 2, 4, ids);  // 20 bytes a step
    const std::string warned = ::testing::internal::GetCapturedStderr();
    try {
      w.close();
    } catch (const Error& e) {
      error = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &saved);
    EXPECT_THAT(warned, HasSubstr(std::strerror(EFBIG)));
  }
  std::signal(SIGXFSZ, old_handler);
  EXPECT_THAT(error, AllOf(HasSubstr(file.string()), HasSubstr(std::strerror(EFBIG)),
                           Not(HasSubstr("Success"))));
  EXPECT_EQ(content_of(file), old_trace);
  EXPECT_EQ(entries_in(dir.path()), 1);  // no temporary left
}

TEST(RoutingTraceWriter, RefusesToReplaceAnythingButATrace) {
  TempFolder dir;
  const auto notes = dir.path() / "notes.txt";
  std::ofstream(notes) << "my notes\n";
  EXPECT_THROW(RoutingTraceWriter(notes, "abc", RoutingShape{2, 4, 2}), Error);
  EXPECT_EQ(content_of(notes), "my notes\n");
  try {
    RoutingTraceWriter w("/dev/full", "abc", RoutingShape{2, 4, 2});
    FAIL() << "a trace was started over /dev/full";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("a character device"));
  }
  const auto model = dir.path() / "model";
  std::filesystem::create_directory(model);
  std::ofstream(model / "model.safetensors") << "weights";
  try {
    RoutingTraceWriter w(model / "model.safetensors", "abc", RoutingShape{2, 4, 2}, model);
    FAIL() << "a trace was started over a model shard";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("inside the model directory"));
  }
  EXPECT_THROW(RoutingTraceWriter(model / "new.trace", "abc", RoutingShape{2, 4, 2}, model), Error);
  EXPECT_EQ(content_of(model / "model.safetensors"), "weights");
  EXPECT_EQ(entries_in(model), 1);
  // An earlier trace is replaced.
  const auto earlier = dir.path() / "earlier.trace";
  std::ofstream(earlier) << kHeader << "end 0\n";
  RoutingTraceWriter w(earlier, "abc", RoutingShape{2, 4, 2}, model);
  w.close();
  EXPECT_EQ(read_routing_trace(earlier).model_id, "abc");
}

TEST(RoutingTraceWriter, AnUnfinishedRunWritesNothing) {
  TempFolder dir;
  const auto file = dir.path() / "trace";
  ::testing::internal::CaptureStderr();
  {
    RoutingTraceWriter w(file, "abc", RoutingShape{2, 4, 2});
    const int32_t ids[] = {0, 1};
    w.on_routed(0, 1, ids);
  }
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("not written"));
  EXPECT_EQ(entries_in(dir.path()), 0);
}

}  // namespace
}  // namespace glmrt
