// io-buffered: passes the io conformance suite; extents come back byte-exact
// (including ones spanning its internal chunks), errors name the file,
// offset and cause.
#include <glmrt/base/error.h>
#include <glmrt/conformance/plugin_conformance.h>
#include <glmrt/host/plugin_host.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

const fs::path kRealPlugins = fs::path(GLMRT_BUILD_DIR) / "plugins";

class IoBufferedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("glmrt-io-test-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    // 10 MiB + 123 bytes: larger than the plugin's 4 MiB chunks, odd length.
    contents_.resize((10u << 20) + 123);
    std::mt19937 rng(11);
    for (auto& byte : contents_) byte = static_cast<char>(rng());
    file_ = dir_ / "experts.bin";
    std::ofstream(file_, std::ios::binary)
        .write(contents_.data(), std::streamsize(contents_.size()));
    small_ = dir_ / "small.bin";
    std::ofstream(small_, std::ios::binary) << "0123456789";
  }
  void TearDown() override { fs::remove_all(dir_); }

  PluginHandle<plugin::Io> make(std::map<std::string, std::string> settings = {}) {
    return PluginHost(std::vector<std::filesystem::path>{kRealPlugins})
        .create_io(PluginChoice{"io-buffered", std::move(settings), {}}, services_);
  }

  void open_both(plugin::Io& io) {
    const std::string a = file_.string(), b = small_.string();
    const char* paths[] = {a.c_str(), b.c_str()};
    ASSERT_EQ(io.open_files(paths, 2), GLMRT_OK) << io.last_error();
  }

  fs::path dir_, file_, small_;
  std::vector<char> contents_;
  MemoryBudget budget_;
  HostServices services_{budget_, 4};
};

TEST(IoBuffered, PassesTheIoConformanceSuite) {
  const conformance::CheckReport report =
      conformance::run_io_conformance(kRealPlugins / "libglmrt-io-buffered.so");
  for (const auto& r : report.results())
    EXPECT_EQ(r.outcome, conformance::Outcome::kPass) << r.name << ": " << r.detail;
  EXPECT_EQ(report.count(conformance::Outcome::kFail), 0u);
}

TEST_F(IoBufferedTest, ReadsEveryExtentExactly) {
  for (auto settings : std::vector<std::map<std::string, std::string>>{
           {}, {{"threads", "3"}, {"drop_after_read", "true"}}, {{"threads", "1"}}}) {
    auto io = make(settings);
    EXPECT_EQ(io->alignment(), 1u);
    open_both(*io);
    struct Want {
      int32_t file;
      uint64_t offset, length;
    };
    const uint64_t size = contents_.size();
    const Want wants[] = {{0, 0, 1},        {0, 1, 4095},           {0, (4u << 20) - 7, 100},
                          {0, 5, size - 5}, {0, size - 1, 1},       {0, 12345, 0},
                          {1, 3, 7},        {0, 1u << 20, 9u << 20}};
    std::vector<std::vector<char>> buffers;
    std::vector<glmrt_extent> extents;
    for (const Want& w : wants) {
      buffers.emplace_back(w.length + 1, '\x7f');
      extents.push_back({w.file, 0, w.offset, w.length, buffers.back().data()});
    }
    io->prefetch(extents.data(), static_cast<int64_t>(extents.size()));
    ASSERT_EQ(io->read(extents.data(), static_cast<int64_t>(extents.size())), GLMRT_OK)
        << io->last_error();
    for (size_t k = 0; k < std::size(wants); ++k) {
      const Want& w = wants[k];
      const char* source = w.file == 0 ? contents_.data() + w.offset : "0123456789" + w.offset;
      EXPECT_EQ(std::memcmp(buffers[k].data(), source, w.length), 0) << "extent " << k;
      EXPECT_EQ(buffers[k][w.length], '\x7f') << "wrote past extent " << k;
    }
  }
}

TEST_F(IoBufferedTest, ReadPastEndOfFileNamesFileAndOffset) {
  auto io = make();
  open_both(*io);
  std::vector<char> buffer(100);
  glmrt_extent past_end{1, 0, 4, 100, buffer.data()};
  EXPECT_EQ(io->read(&past_end, 1), GLMRT_ERR_IO);
  EXPECT_THAT(io->last_error(),
              AllOf(HasSubstr(small_.string()), HasSubstr("offset 4"), HasSubstr("byte 10")));
}

TEST_F(IoBufferedTest, BadExtentsAreRefusedBeforeReading) {
  auto io = make();
  open_both(*io);
  char byte = 0;
  glmrt_extent bad_file{2, 0, 0, 1, &byte};
  EXPECT_EQ(io->read(&bad_file, 1), GLMRT_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(io->last_error(), AllOf(HasSubstr("file 2"), HasSubstr("2 files are open")));
  glmrt_extent no_destination{0, 0, 0, 1, nullptr};
  EXPECT_EQ(io->read(&no_destination, 1), GLMRT_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(io->last_error(), HasSubstr("no destination"));
}

TEST_F(IoBufferedTest, OpeningAMissingFileNamesIt) {
  auto io = make();
  const std::string missing = (dir_ / "missing.safetensors").string();
  const char* paths[] = {missing.c_str()};
  EXPECT_EQ(io->open_files(paths, 1), GLMRT_ERR_IO);
  EXPECT_THAT(io->last_error(), AllOf(HasSubstr(missing), HasSubstr("No such file")));
}

TEST_F(IoBufferedTest, SettingsAreChecked) {
  auto message_of = [&](std::map<std::string, std::string> settings) -> std::string {
    try {
      make(std::move(settings));
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_THAT(message_of({{"thread", "2"}}),
              AllOf(HasSubstr("unknown setting `thread`"), HasSubstr("libglmrt-io-buffered.so")));
  EXPECT_THAT(message_of({{"threads", "0"}}), HasSubstr("`threads` expects an integer"));
  EXPECT_THAT(message_of({{"threads", "2x"}}), HasSubstr("found `2x`"));
  EXPECT_THAT(message_of({{"drop_after_read", "yes"}}), HasSubstr("true or false"));
  EXPECT_EQ(message_of({{"drop_after_read", "false"}, {"threads", "8"}}), "accepted");
  EXPECT_THAT(message_of({{"max_bytes_per_second", "0"}}), HasSubstr("a positive byte count"));
  EXPECT_THAT(message_of({{"max_bytes_per_second", "5 furlongs"}}),
              HasSubstr("found `5 furlongs`"));
  EXPECT_EQ(message_of({{"max_bytes_per_second", "1.5GiB"}}), "accepted");
  EXPECT_THAT(message_of({{"cap_credit_seconds", "-0.1"}}),
              AllOf(HasSubstr("`cap_credit_seconds`"), HasSubstr("from 0 to 1")));
  EXPECT_THAT(message_of({{"cap_credit_seconds", "2"}}), HasSubstr("found `2`"));
  EXPECT_THAT(message_of({{"cap_credit_seconds", "20ms"}}), HasSubstr("found `20ms`"));
  EXPECT_EQ(message_of({{"cap_credit_seconds", "0"}}), "accepted");
}

// max_bytes_per_second caps what one plugin instance reads, all its files
// and threads together; with the cap off the same reads are far faster.
TEST_F(IoBufferedTest, MaxBytesPerSecondCapsEveryFileTogether) {
  const uint64_t size = contents_.size();
  auto read_all = [&](std::map<std::string, std::string> settings) {
    auto io = make(std::move(settings));
    open_both(*io);
    std::vector<char> a(size), b(10);
    // The big file in two halves on two threads, and the small one.
    glmrt_extent extents[] = {{0, 0, 0, size / 2, a.data()},
                              {0, 0, size / 2, size - size / 2, a.data() + size / 2},
                              {1, 0, 0, 10, b.data()}};
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(io->read(extents, 3), GLMRT_OK) << io->last_error();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(std::memcmp(a.data(), contents_.data(), size), 0);
    return seconds;
  };
  read_all({});  // the file in the page cache, for both timings
  const double capped = read_all({{"threads", "2"}, {"max_bytes_per_second", "40MB"}});
  const double free = read_all({{"threads", "2"}});
  // ~10.5 MB at 40 MB/s: 0.26 s, less the burst an idle cap allows (20 ms).
  EXPECT_GE(capped, 0.2) << "the cap was not applied";
  EXPECT_LT(capped, 2.0);
  EXPECT_LT(free, capped / 2) << "capped " << capped << " s, uncapped " << free << " s";
}

// An idle cap keeps credit (cap_credit_seconds, 20 ms by default): a fresh
// instance reads 80 KB at 4 MB/s at once. With no credit it paces that read
// like a drive of that speed: 20 ms.
TEST_F(IoBufferedTest, CapCreditIsTheBurstAnIdleCapAllows) {
  auto first_read = [&](std::map<std::string, std::string> settings) {
    auto io = make(std::move(settings));
    open_both(*io);
    std::vector<char> a(80000);
    glmrt_extent extent{0, 0, 0, a.size(), a.data()};
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(io->read(&extent, 1), GLMRT_OK) << io->last_error();
    EXPECT_EQ(std::memcmp(a.data(), contents_.data(), a.size()), 0);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  first_read({});  // the file in the page cache
  const double paced = first_read({{"max_bytes_per_second", "4MB"}, {"cap_credit_seconds", "0"}});
  // The fastest of three fresh instances: a loaded machine (sanitizers,
  // ctest -j) may hold one read back for longer than the pacing.
  double credited = 1e9;
  for (int attempt = 0; attempt < 3; ++attempt)
    credited = std::min(credited, first_read({{"max_bytes_per_second", "4MB"}}));
  EXPECT_GE(paced, 0.019) << "no credit: 80 KB at 4 MB/s take 20 ms";
  EXPECT_LT(credited, paced) << "the default credit holds 80 KB at 4 MB/s";
}

}  // namespace
}  // namespace glmrt
