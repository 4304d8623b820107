// The fault-io test plugin itself: without faults it is a correct io plugin
// (the conformance suite passes); with them it fails, shortens or delays
// exactly the reads its settings name.
#include <glmrt/base/error.h>
#include <glmrt/conformance/plugin_conformance.h>
#include <glmrt/host/plugin_host.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <random>

#include "checkpoint_generator.h"

namespace glmrt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const std::filesystem::path kFaultIo = GLMRT_FAULT_IO_PLUGIN;
constexpr char kUntouched = '\x5a';

class FaultIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    contents_.resize(1 << 16);
    std::mt19937 rng(7);
    for (char& c : contents_) c = static_cast<char>(rng());
    file_ = scratch_.path() / "data.bin";
    std::ofstream(file_, std::ios::binary)
        .write(contents_.data(), static_cast<std::streamsize>(contents_.size()));
  }

  PluginHandle<plugin::Io> make(std::map<std::string, std::string> settings = {}) {
    auto io = PluginHost(std::vector<std::filesystem::path>{})
                  .create_io(PluginChoice{kFaultIo.string(), std::move(settings), {}}, services_);
    const std::string path = file_.string();
    const char* paths[] = {path.c_str()};
    EXPECT_EQ(io->open_files(paths, 1), GLMRT_OK) << io->last_error();
    return io;
  }

  /// Five extents of 1000 bytes at offsets 0, 3000, 6000, ... into fresh buffers.
  void plan_batch() {
    buffers_.assign(5, std::vector<char>(1000, kUntouched));
    extents_.clear();
    for (size_t k = 0; k < buffers_.size(); ++k)
      extents_.push_back({0, 0, 3000 * k, 1000, buffers_[k].data()});
  }
  glmrt_status read_batch(plugin::Io& io) {
    return io.read(extents_.data(), static_cast<int64_t>(extents_.size()));
  }
  /// How many leading bytes of extent k equal the file.
  size_t matching_prefix(size_t k) const {
    size_t n = 0;
    while (n < buffers_[k].size() && buffers_[k][n] == contents_[extents_[k].offset + n]) ++n;
    return n;
  }
  bool untouched_from(size_t k, size_t from) const {
    for (size_t i = from; i < buffers_[k].size(); ++i)
      if (buffers_[k][i] != kUntouched) return false;
    return true;
  }

  test::ScratchDir scratch_{"glmrt-fault-io"};
  std::filesystem::path file_;
  std::vector<char> contents_;
  std::vector<std::vector<char>> buffers_;
  std::vector<glmrt_extent> extents_;
  MemoryBudget budget_;
  HostServices services_{budget_, 2};
};

TEST_F(FaultIoTest, WithoutFaultsPassesTheIoConformanceSuite) {
  const conformance::CheckReport report = conformance::run_io_conformance(kFaultIo);
  for (const auto& r : report.results())
    EXPECT_NE(r.outcome, conformance::Outcome::kFail) << r.name << ": " << r.detail;
  EXPECT_GE(report.count(conformance::Outcome::kPass), 5u);
}

TEST_F(FaultIoTest, RefusesUnknownAndMalformedSettings) {
  auto message_of = [&](std::map<std::string, std::string> settings) -> std::string {
    try {
      make(std::move(settings));
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_THAT(message_of({{"eio_on", "3"}}),
              AllOf(HasSubstr("unknown setting `eio_on`"), HasSubstr(kFaultIo.string())));
  EXPECT_THAT(message_of({{"eio_at", "0"}}), HasSubstr("`eio_at` expects a read number >= 1"));
  EXPECT_THAT(message_of({{"short_read_every", "2x"}}), HasSubstr("found `2x`"));
  EXPECT_THAT(message_of({{"short_reads_reported", "yes"}}), HasSubstr("true or false"));
  EXPECT_THAT(message_of({{"latency_ms", "-1"}}), HasSubstr("milliseconds"));
  EXPECT_EQ(message_of({{"eio_at", "4"},
                        {"short_read_at", "2"},
                        {"short_read_every", "9"},
                        {"short_reads_reported", "false"},
                        {"latency_ms", "0"}}),
            "accepted");
}

TEST_F(FaultIoTest, EioOnTheNthReadNamesFileAndOffsetAndStopsThere) {
  auto io = make({{"eio_at", "3"}});
  plan_batch();
  ASSERT_EQ(read_batch(*io), GLMRT_ERR_IO);
  EXPECT_THAT(io->last_error(),
              AllOf(HasSubstr(file_.string()), HasSubstr("at offset 6000 (1000 bytes)"),
                    HasSubstr(std::strerror(EIO)), HasSubstr("read #3"), HasSubstr("extent #2")));
  EXPECT_EQ(matching_prefix(0), 1000u);
  EXPECT_EQ(matching_prefix(1), 1000u);
  // The failed read leaves partial data behind: the host must not use it.
  EXPECT_EQ(matching_prefix(2), 500u);
  EXPECT_TRUE(untouched_from(2, 500));
  EXPECT_TRUE(untouched_from(3, 0));
  EXPECT_TRUE(untouched_from(4, 0));
  // Reads 6..10: no fault left.
  plan_batch();
  ASSERT_EQ(read_batch(*io), GLMRT_OK) << io->last_error();
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(matching_prefix(k), 1000u) << k;
}

TEST_F(FaultIoTest, ReportedShortReadsAtAndEvery) {
  auto io = make({{"short_read_at", "2"}, {"short_read_every", "4"}});
  plan_batch();
  ASSERT_EQ(read_batch(*io), GLMRT_ERR_IO);
  EXPECT_THAT(io->last_error(),
              AllOf(HasSubstr("short read of " + file_.string()), HasSubstr("at offset 3000"),
                    HasSubstr("got 500 bytes"), HasSubstr("read #2")));
  EXPECT_EQ(matching_prefix(1), 500u);
  // Reads are numbered when submitted, so the extents the failed batch left
  // unread used up 3..5: this batch is reads 6..10, the 8th short.
  plan_batch();
  ASSERT_EQ(read_batch(*io), GLMRT_ERR_IO);
  EXPECT_THAT(io->last_error(), AllOf(HasSubstr("at offset 6000"), HasSubstr("read #8")));
  plan_batch();  // reads 11..15: the 12th is short
  ASSERT_EQ(read_batch(*io), GLMRT_ERR_IO);
  EXPECT_THAT(io->last_error(), AllOf(HasSubstr("at offset 3000"), HasSubstr("read #12")));
}

TEST_F(FaultIoTest, UnreportedShortReadReturnsOkWithHalfTheBytes) {
  auto io = make({{"short_read_at", "2"}, {"short_reads_reported", "false"}});
  plan_batch();
  ASSERT_EQ(read_batch(*io), GLMRT_OK);
  EXPECT_EQ(matching_prefix(0), 1000u);
  EXPECT_EQ(matching_prefix(1), 500u);
  EXPECT_TRUE(untouched_from(1, 500));
  for (size_t k = 2; k < 5; ++k) EXPECT_EQ(matching_prefix(k), 1000u) << k;
}

TEST_F(FaultIoTest, PrefetchIsNeitherCountedNorFaulted) {
  auto io = make({{"eio_at", "1"}});
  plan_batch();
  io->prefetch(extents_.data(), static_cast<int64_t>(extents_.size()));
  ASSERT_EQ(read_batch(*io), GLMRT_ERR_IO);
  EXPECT_THAT(io->last_error(), AllOf(HasSubstr("read #1"), HasSubstr("at offset 0 ")));
}

TEST_F(FaultIoTest, LatencyDelaysEveryReadAndChangesNoByte) {
  auto io = make({{"latency_ms", "15"}});
  plan_batch();
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(read_batch(*io), GLMRT_OK) << io->last_error();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(seconds, 5 * 0.015);
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(matching_prefix(k), 1000u) << k;
}

TEST_F(FaultIoTest, BadExtentsAreRefusedWithoutUsingUpAReadNumber) {
  auto io = make({{"eio_at", "1"}});
  char byte = 0;
  glmrt_extent bad_file{1, 0, 0, 1, &byte};
  EXPECT_EQ(io->read(&bad_file, 1), GLMRT_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(io->last_error(), AllOf(HasSubstr("file 1"), Not(HasSubstr("read #"))));
  plan_batch();
  ASSERT_EQ(read_batch(*io), GLMRT_ERR_IO);
  EXPECT_THAT(io->last_error(), HasSubstr("read #1"));
}

}  // namespace
}  // namespace glmrt
