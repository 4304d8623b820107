// io-odirect: passes the io conformance suite; a filesystem that refuses
// O_DIRECT (tmpfs) is read through the page cache with one warning; a short
// read is continued, a read that stalls before the file's end is retried and
// then reported naming file and offset, EIO is an error and never data.
#include <glmrt/base/error.h>
#include <glmrt/base/huge_pages.h>
#include <glmrt/conformance/plugin_conformance.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/host/plugin_host.h>

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <random>

#include "checkpoint_generator.h"
#include "direct_read.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

const fs::path kPlugins = fs::path(GLMRT_BUILD_DIR) / "plugins";
const fs::path kOdirect = kPlugins / "libglmrt-io-odirect.so";

TEST(IoOdirect, PassesTheIoConformanceSuite) {
  const conformance::CheckReport report = conformance::run_plugin_conformance(kOdirect);
  for (const auto& r : report.results())
    EXPECT_EQ(r.outcome, conformance::Outcome::kPass) << r.name << ": " << r.detail;
  EXPECT_GE(report.count(conformance::Outcome::kPass), 10u);
}

TEST(IoOdirect, ProbeSaysSupportedOnLinux) {
  const PluginInfo info = PluginHost(std::vector<fs::path>{}).inspect(kOdirect);
  EXPECT_TRUE(info.supported) << info.reason;
  EXPECT_EQ(info.kind, "io");
  EXPECT_EQ(info.abi_minor, GLMRT_ABI_MINOR);
}

TEST(IoOdirect, RefusesBadSettings) {
  MemoryBudget budget;
  HostServices services(budget, 2);
  const PluginHost host(std::vector<fs::path>{});
  EXPECT_NO_THROW(
      host.create_io(PluginChoice{kOdirect.string(), {{"threads", "8"}}, {}}, services));
  try {
    host.create_io(PluginChoice{kOdirect.string(), {{"threads", "0"}}, {}}, services);
    FAIL() << "threads: 0 accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("`threads`"));
  }
}

bool on_tmpfs(const fs::path& dir) {
  struct statfs info {};
  constexpr long kTmpfsMagic = 0x01021994;
  return ::statfs(dir.c_str(), &info) == 0 && info.f_type == kTmpfsMagic;
}

/// Two files (`stem`-0, -1) of random bytes in `dir`, read through
/// `plugin` with the host's widening: a tensor ending at the unaligned end of
/// the second, a tiny one straddling a block boundary of the first, three
/// times over. Returns what the host logged on stderr.
std::string read_two_files(const fs::path& plugin, const fs::path& dir, const std::string& stem) {
  std::vector<fs::path> files;
  std::vector<std::vector<char>> contents;
  std::mt19937 rng(3);
  for (int f = 0; f < 2; ++f) {
    files.push_back(dir / (stem + "-" + std::to_string(f) + ".safetensors"));
    contents.emplace_back(100000 + 777 * f);
    for (char& c : contents.back()) c = static_cast<char>(rng());
    std::ofstream(files.back(), std::ios::binary)
        .write(contents.back().data(), static_cast<std::streamsize>(contents.back().size()));
  }
  MemoryBudget budget;
  HostServices services(budget, 2);
  ::testing::internal::CaptureStderr();
  {
    auto io = PluginHost(std::vector<fs::path>{})
                  .create_io(PluginChoice{plugin.string(), {}, {}}, services);
    IoChannel channel(*io, io.info().abi_minor, files);
    HugePageBlock buffer(1 << 20, nullptr, "test");
    const uint64_t size = contents[1].size(), offset = size - 5001;
    for (int round = 0; round < 3; ++round) {
      std::vector<PlannedRead> reads = {channel.plan(1, offset, 5001, buffer.data()),
                                        channel.plan(0, 4095, 3, buffer.data() + 65536)};
      IoTicket ticket = channel.submit(reads);
      const auto failure = channel.wait(ticket);
      EXPECT_FALSE(failure) << failure->message;
      EXPECT_EQ(std::memcmp(buffer.data() + reads[0].span.lead, contents[1].data() + offset, 5001),
                0);
      EXPECT_EQ(
          std::memcmp(buffer.data() + 65536 + reads[1].span.lead, contents[0].data() + 4095, 3), 0);
    }
  }
  return ::testing::internal::GetCapturedStderr();
}

size_t count(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

TEST(IoOdirect, AFilesystemRefusingODirectIsReadBufferedWithOneWarning) {
  test::ScratchDir scratch("glmrt-odirect-refused");
  const fs::path refusing = GLMRT_IO_ODIRECT_REFUSING_PLUGIN;
  const std::string log = read_two_files(refusing, scratch.path(), "refuses-o-direct");
  EXPECT_THAT(
      log, AllOf(HasSubstr("warning"),
                 HasSubstr((scratch.path() / "refuses-o-direct-0.safetensors").string()),
                 HasSubstr("(and 1 more files)"), HasSubstr("O_DIRECT"), HasSubstr("page cache")));
  EXPECT_EQ(count(log, "io-odirect:"), 1u) << log;
  // The same build reads other files O_DIRECT, without a word.
  EXPECT_EQ(read_two_files(refusing, scratch.path(), "ordinary"), "");
}

TEST(IoOdirect, TmpfsIsReadEitherWay) {
  // tmpfs refused O_DIRECT before Linux 6.6 (a warning and buffered reads),
  // accepts it since: the bytes come back right in both cases.
  const fs::path shm = "/dev/shm";
  if (!fs::is_directory(shm) || !on_tmpfs(shm)) GTEST_SKIP() << "no tmpfs at /dev/shm";
  test::ScratchDir scratch((shm / "glmrt-odirect").string());
  const std::string log = read_two_files(kOdirect, scratch.path(), "shard");
  const int probe = ::open((scratch.path() / "shard-0.safetensors").c_str(), O_RDONLY | O_DIRECT);
  if (probe >= 0) {
    ::close(probe);
    EXPECT_EQ(log, "");
  } else {
    EXPECT_EQ(count(log, "io-odirect:"), 1u) << log;
  }
}

// ---- the read loop itself, against a disk that misbehaves on purpose ----

/// What the fake pread does on each call, in order; after the script, reads
/// come from the "file" normally.
struct FakeCall {
  enum Kind { normal, short_by, nothing, error } kind = normal;
  int64_t value = 0;  // bytes short, or errno
};

struct FakeDisk {
  std::vector<std::byte> file;
  std::deque<FakeCall> script;
  std::vector<std::pair<int, uint64_t>> calls;  // fd, offset
};
FakeDisk* g_disk = nullptr;  // the fake pread reaches its disk through this (tests only)

ssize_t fake_pread(int fd, void* buffer, size_t count, off_t offset) {
  FakeDisk& disk = *g_disk;
  disk.calls.emplace_back(fd, static_cast<uint64_t>(offset));
  FakeCall call;
  if (!disk.script.empty()) {
    call = disk.script.front();
    disk.script.pop_front();
  }
  if (call.kind == FakeCall::error) {
    errno = static_cast<int>(call.value);
    return -1;
  }
  if (call.kind == FakeCall::nothing) return 0;
  const uint64_t at = static_cast<uint64_t>(offset);
  if (at >= disk.file.size()) return 0;
  size_t n = std::min<size_t>(count, disk.file.size() - at);
  if (call.kind == FakeCall::short_by) n -= std::min<size_t>(n, static_cast<size_t>(call.value));
  std::memcpy(buffer, disk.file.data() + at, n);
  return static_cast<ssize_t>(n);
}

class DirectReadTest : public ::testing::Test {
 protected:
  static constexpr int kDirectFd = 100, kBufferedFd = 101;
  void SetUp() override {
    disk_.file.resize(64 * 4096 + 1000);
    std::mt19937 rng(9);
    for (std::byte& b : disk_.file) b = static_cast<std::byte>(rng());
    g_disk = &disk_;
    twins_ = {"/models/glm/model-00001-of-00002.safetensors", kDirectFd, kBufferedFd,
              disk_.file.size()};
  }
  void TearDown() override { g_disk = nullptr; }
  io_odirect::ExtentRead read(uint64_t offset, uint64_t length) {
    return io_odirect::read_extent_fully(twins_, offset, length, buffer_.data(), 4096, true,
                                         &fake_pread);
  }
  bool matches(uint64_t offset, uint64_t length) const {
    return std::memcmp(buffer_.data(), disk_.file.data() + offset, length) == 0;
  }

  FakeDisk disk_;
  io_odirect::FileTwins twins_;
  HugePageBlock buffer_{1 << 20, nullptr, "test"};
};

TEST_F(DirectReadTest, AlignedReadIsOneDirectPread) {
  const auto r = read(8192, 16 * 4096);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.bytes, 16u * 4096);
  EXPECT_TRUE(matches(8192, 16 * 4096));
  ASSERT_EQ(disk_.calls.size(), 1u);
  EXPECT_EQ(disk_.calls[0].first, kDirectFd);
}

TEST_F(DirectReadTest, AShortAnswerIsContinued) {
  disk_.script = {{FakeCall::short_by, 4096}, {FakeCall::short_by, 100}};
  const auto r = read(0, 8 * 4096);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.bytes, 8u * 4096);
  EXPECT_TRUE(matches(0, 8 * 4096));
  ASSERT_GE(disk_.calls.size(), 3u);
  EXPECT_EQ(disk_.calls[1], (std::pair<int, uint64_t>{kDirectFd, 7 * 4096}));
  // 100 bytes short leaves an unaligned remainder: the page-cache twin reads it.
  EXPECT_EQ(disk_.calls[2].first, kBufferedFd);
}

TEST_F(DirectReadTest, TheEndOfTheFileStopsTheReadWithItsCount) {
  const uint64_t offset = 64 * 4096;  // 1000 bytes before the end
  const auto r = read(offset, 4096);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.bytes, 1000u);
  EXPECT_TRUE(matches(offset, 1000));
}

TEST_F(DirectReadTest, AReadThatStallsBeforeTheEndIsRetriedThenReported) {
  disk_.script = {{FakeCall::short_by, 8192}, {FakeCall::nothing}, {FakeCall::nothing}};
  const auto r = read(4096, 4 * 4096);  // two stalls, then it delivers: fine
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(matches(4096, 4 * 4096));

  disk_.calls.clear();
  disk_.script.assign(1 + io_odirect::kShortReadRetries + 1, {FakeCall::nothing});
  disk_.script.front() = {FakeCall::short_by, 8192};
  const auto stuck = read(4096, 4 * 4096);
  EXPECT_FALSE(stuck.ok);
  EXPECT_EQ(stuck.bytes, 2u * 4096);
  EXPECT_THAT(stuck.error, AllOf(HasSubstr("short read of " + twins_.path + " at offset 4096"),
                                 HasSubstr("got 8192 bytes"), HasSubstr("at offset 12288"),
                                 HasSubstr("retries")));
  EXPECT_EQ(disk_.calls.size(), 2u + io_odirect::kShortReadRetries);
}

TEST_F(DirectReadTest, EioIsAnErrorNamingFileAndOffset) {
  disk_.script = {{FakeCall::short_by, 4096}, {FakeCall::error, EIO}};
  const auto r = read(4096, 8 * 4096);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, AllOf(HasSubstr("reading " + twins_.path + " at offset 32768"),
                             HasSubstr(std::strerror(EIO))));
}

TEST_F(DirectReadTest, ARefusedDirectReadIsDoneThroughThePageCache) {
  disk_.script = {{FakeCall::error, EINVAL}};
  const auto r = read(0, 4 * 4096);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.direct_refused);
  EXPECT_TRUE(matches(0, 4 * 4096));
  ASSERT_EQ(disk_.calls.size(), 2u);
  EXPECT_EQ(disk_.calls[1].first, kBufferedFd);
}

TEST_F(DirectReadTest, UnalignedPiecesGoThroughThePageCache) {
  const auto r = read(100, 5000);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(matches(100, 5000));
  ASSERT_EQ(disk_.calls.size(), 1u);
  EXPECT_EQ(disk_.calls[0].first, kBufferedFd);
}

}  // namespace
}  // namespace glmrt
