// The host's io channel on a real checkpoint: every tensor of glm_tiny (odd
// offsets after odd-length headers, the last of each shard ending at an
// unaligned end of file) read through each io plugin, widened to its
// alignment, and compared with the bytes the file holds; byte counts and the
// 1.0 path checked.
#include <glmrt/base/error.h>
#include <glmrt/base/huge_pages.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/host/plugin_host.h>
#include <glmrt/model_files/safetensors.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kTiny = fs::path(GLMRT_FIXTURES) / "glm_tiny";

struct IoCase {
  std::string name;
  std::string plugin;  // a name on the build's plugin path, or a path
  int abi_minor;
  uint32_t alignment;
};

void PrintTo(const IoCase& c, std::ostream* os) {
  *os << c.name;
}

class IoChannelTest : public ::testing::TestWithParam<IoCase> {
 protected:
  IoChannelTest() : tensors_(TensorDirectory::open(kTiny)) {}

  PluginHandle<plugin::Io> make_io(std::map<std::string, std::string> settings = {}) {
    return PluginHost(std::vector<fs::path>{fs::path(GLMRT_BUILD_DIR) / "plugins"})
        .create_io(PluginChoice{GetParam().plugin, std::move(settings), {}}, services_);
  }

  TensorDirectory tensors_;
  MemoryBudget budget_;
  HostServices services_{budget_, 2};
};

TEST_P(IoChannelTest, ReadsEveryTensorAtItsRealOffset) {
  auto io = make_io();
  IoChannel channel(*io, io.info().abi_minor, tensors_.files());
  EXPECT_EQ(channel.alignment(), GetParam().alignment);
  EXPECT_EQ(channel.asynchronous(), GetParam().abi_minor >= 1);
  // Place every tensor's widened read in one huge-page buffer.
  std::vector<uint64_t> at;
  uint64_t bytes = 0;
  for (const TensorInfo& t : tensors_.tensors()) {
    at.push_back(bytes);
    const WidenedRead w =
        widen_read(t.offset, t.byte_size, channel.alignment(), channel.file_size(t.file_index));
    bytes = align_up(bytes + w.length, channel.destination_alignment());
  }
  HugePageBlock buffer(bytes, nullptr, "test");
  std::vector<PlannedRead> reads;
  int unaligned = 0, ending_the_file = 0;
  for (size_t k = 0; k < tensors_.tensors().size(); ++k) {
    const TensorInfo& t = tensors_.tensors()[k];
    reads.push_back(channel.plan(t.file_index, t.offset, t.byte_size, buffer.data() + at[k]));
    unaligned += t.offset % 4096 != 0;
    if (t.offset + t.byte_size == channel.file_size(t.file_index)) {
      ++ending_the_file;
      if (channel.alignment() > 1) {
        EXPECT_LT(reads.back().span.expected, reads.back().span.length);
      }
    }
  }
  ASSERT_GT(unaligned, 100);
  ASSERT_EQ(ending_the_file, 3);  // one per shard

  IoTicket ticket = channel.submit(reads);
  const auto failure = channel.wait(ticket);
  ASSERT_FALSE(failure) << failure->message;
  std::vector<std::byte> expected;
  for (size_t k = 0; k < reads.size(); ++k) {
    const TensorInfo& t = tensors_.tensors()[k];
    expected.resize(t.byte_size);
    tensors_.read_raw(t, expected);
    ASSERT_EQ(std::memcmp(reads[k].destination + reads[k].span.lead, expected.data(), t.byte_size),
              0)
        << t.name;
  }
  EXPECT_EQ(channel.stats().reads, reads.size());
  EXPECT_GT(channel.stats().busy_seconds, 0.0);
}

TEST_P(IoChannelTest, DestinationsMustBeAlignedAndRangesInsideTheFile) {
  auto io = make_io();
  IoChannel channel(*io, io.info().abi_minor, tensors_.files());
  HugePageBlock buffer(1 << 16, nullptr, "test");
  EXPECT_THROW(channel.plan(0, 0, 10, buffer.data() + 1), Error);
  try {
    channel.plan(1, channel.file_size(1) - 4, 5, buffer.data());
    FAIL() << "a range past the end of the file was planned";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(tensors_.files()[1].string()));
  }
  EXPECT_THROW(channel.plan(3, 0, 1, buffer.data()), Error);
}

INSTANTIATE_TEST_SUITE_P(Plugins, IoChannelTest,
                         ::testing::Values(IoCase{"io_buffered", "io-buffered", GLMRT_ABI_MINOR, 1},
                                           IoCase{"io_odirect", "io-odirect", GLMRT_ABI_MINOR,
                                                  4096},
                                           IoCase{"fault_io_1_0", GLMRT_FAULT_IO_1_0_PLUGIN, 0, 1}),
                         [](const auto& info) { return info.param.name; });

// A 1.4 plugin says when each read landed: the drive counts as busy until
// then, not until the host next looked (reads ahead land while the model
// computes; counting that time as reading made the drive look slower and
// busier than it is, and read-ahead priced by it read less).
TEST(IoChannel, TheDriveIsBusyUntilAReadLandsNotUntilTheHostWaits) {
  MemoryBudget budget;
  HostServices services{budget, 2};
  const TensorDirectory tensors = TensorDirectory::open(kTiny);
  HugePageBlock buffer(1 << 16, nullptr, "test");
  const auto busy_after_waiting_late = [&](int abi_minor) {
    // A plugin opens its file set once: a new one for each channel.
    auto io =
        PluginHost(std::vector<fs::path>{})
            .create_io(PluginChoice{GLMRT_FAULT_IO_PLUGIN, {{"latency_ms", "40"}}, {}}, services);
    EXPECT_GE(io.info().abi_minor, GLMRT_ABI_MINOR_IO_COMPLETION_TIME);
    IoChannel channel(*io, abi_minor, tensors.files());
    const PlannedRead read = channel.plan(0, 0, 4096, buffer.data());
    IoTicket ticket = channel.submit(std::span(&read, 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(channel.wait(ticket));
    EXPECT_NEAR(channel.stats().latency_seconds, channel.stats().busy_seconds, 1e-9);
    return channel.stats().busy_seconds;
  };
  const double reported = busy_after_waiting_late(GLMRT_ABI_MINOR_IO_COMPLETION_TIME);
  EXPECT_GE(reported, 0.039);
  EXPECT_LT(reported, 0.2) << "busy until the host waited, not until the read landed";
  // A plugin older than 1.4 says nothing: busy until the host found out.
  EXPECT_GE(busy_after_waiting_late(GLMRT_ABI_MINOR_IO_COMPLETION_TIME - 1), 0.3);
}

// io-buffered meets the end of a file cut after it was opened as a read of 0
// bytes and reports success: the host says the file is short, not the plugin.
TEST(IoChannel, AFileCutAfterOpeningIsNamedNotThePlugin) {
  std::string pattern = (fs::temp_directory_path() / "glmrt-cut-XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  ASSERT_GE(fd, 0);
  const fs::path file = pattern;
  const std::vector<char> bytes(8192, 'w');
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  MemoryBudget budget;
  HostServices services{budget, 2};
  auto io = PluginHost(std::vector<fs::path>{fs::path(GLMRT_BUILD_DIR) / "plugins"})
                .create_io(PluginChoice{"io-buffered", {}, {}}, services);
  IoChannel channel(*io, io.info().abi_minor, {file});
  HugePageBlock buffer(1 << 16, nullptr, "test");
  const PlannedRead read = channel.plan(0, 4096, 4096, buffer.data());
  fs::resize_file(file, 5000);
  IoTicket ticket = channel.submit(std::span(&read, 1));
  const auto failure = channel.wait(ticket);
  fs::remove(file);
  ASSERT_TRUE(failure);
  EXPECT_THAT(failure->message,
              AllOf(HasSubstr(file.string() + " is shorter than its header says"),
                    HasSubstr("ends at byte 5000"), HasSubstr("4096 bytes from byte 4096"),
                    HasSubstr("up to 8192"), Not(HasSubstr("io plugin"))));
}

}  // namespace
}  // namespace glmrt
