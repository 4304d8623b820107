// Routing traces: written step by step, read back exactly; malformed ones
// refused naming the line.
#include "history_temp_dir.h"

#include <glmrt/base/error.h>
#include <glmrt/history/routing_trace.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

namespace glmrt {
namespace {

using history_test::HistoryTempDir;

TEST(RoutingTrace, WrittenAndReadBack) {
  HistoryTempDir dir;
  const auto file = dir.path() / "trace";
  {
    RoutingTraceWriter w(file, "abc", 5, 16, 2);
    const int32_t step1[] = {3, 4, 4, 9};
    const int32_t step2[] = {15, 0};
    w.on_routed(1, 2, step1);
    w.on_routed(4, 1, step2);
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
  HistoryTempDir dir;
  const auto file = dir.path() / "bad";
  std::ofstream(file) << "glmrt-routing-trace 1\nmodel x\nshape 2 4 2\n1 1 0 1\n1 1 0 7\n";
  try {
    read_routing_trace(file);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(":5:"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("expert 7 out of range"));
  }
  std::ofstream(file) << "glmrt-routing-trace 1\nmodel x\nshape 2 4 2\n1 2 0 1\n";
  EXPECT_THROW(read_routing_trace(file), Error);  // 2 positions need 4 ids
  std::ofstream(file) << "something else\n";
  EXPECT_THROW(read_routing_trace(file), Error);
}

}  // namespace
}  // namespace glmrt
