// `mirrors`: io-buffered and io-odirect read several copies of the model's
// files (one per drive), each read from the least busy copy under that
// copy's own cap; a mirror that is not a copy (size, header) is refused at
// open naming both files. Each copy's data bytes differ here (headers and
// sizes match, which is all the open-time check compares), so every read
// shows which copy served it.
#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "temp_folder.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

const fs::path kRealPlugins = fs::path(GLMRT_BUILD_DIR) / "plugins";
constexpr uint64_t kBlock = 64 << 10;  // every extent: O_DIRECT-aligned
constexpr uint64_t kBlocks = 64;
constexpr uint64_t kHeader = 4096;  // the safetensors-style header, then data

struct AlignedFree {
  void operator()(char* p) const { std::free(p); }
};

class IoMirrorsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    for (int copy = 0; copy < 3; ++copy)
      write_copy(copy_folder(copy), static_cast<char>('A' + copy));
  }

  fs::path copy_folder(int copy) const { return root_ / fmt::format("drive{}", copy) / "model"; }

  /// A safetensors-shaped file: an 8-byte header length, the header, then
  /// data bytes that all read `fill` (the copy's mark).
  static void write_copy(const fs::path& folder, char fill, uint64_t extra = 0,
                         char header_byte = '{') {
    fs::create_directories(folder / "sub");
    std::string bytes(kHeader + kBlocks * kBlock + extra, fill);
    const uint64_t header = kHeader - 8;
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header >> (8 * i)) & 0xff);
    std::fill(bytes.begin() + 8, bytes.begin() + kHeader, ' ');
    bytes[8] = header_byte;
    std::ofstream(folder / "sub" / "experts.safetensors", std::ios::binary) << bytes;
    std::ofstream(folder / "small.bin", std::ios::binary) << "0123456789";
  }

  PluginHandle<plugin::Io> make(std::map<std::string, std::string> settings) {
    return PluginHost(std::vector<fs::path>{kRealPlugins})
        .create_io(PluginChoice{GetParam(), std::move(settings), {}}, services_);
  }

  /// open_files on copy 0's two files.
  glmrt_status open(plugin::Io& io) {
    const std::string a = (copy_folder(0) / "sub" / "experts.safetensors").string(),
                      b = (copy_folder(0) / "small.bin").string();
    const char* paths[] = {a.c_str(), b.c_str()};
    return io.open_files(paths, 2);
  }

  /// Reads `n` data blocks in one batch; per copy, how many it served.
  std::array<int, 3> read_blocks(plugin::Io& io, uint64_t n) {
    std::unique_ptr<char, AlignedFree> buffer(
        static_cast<char*>(std::aligned_alloc(4096, n * kBlock)));
    std::vector<glmrt_extent> extents;
    for (uint64_t b = 0; b < n; ++b)
      extents.push_back(
          {0, 0, kHeader + (b % kBlocks) * kBlock, kBlock, buffer.get() + b * kBlock});
    EXPECT_EQ(io.read(extents.data(), static_cast<int64_t>(n)), GLMRT_OK) << io.last_error();
    std::array<int, 3> served{};
    for (uint64_t b = 0; b < n; ++b) {
      const char* block = buffer.get() + b * kBlock;
      const int copy = block[0] - 'A';
      EXPECT_TRUE(copy >= 0 && copy < 3) << "block " << b;
      if (copy < 0 || copy >= 3) continue;
      ++served[static_cast<size_t>(copy)];
      // One read, one copy: no block mixes two.
      EXPECT_EQ(std::string(block, kBlock), std::string(kBlock, block[0])) << "block " << b;
    }
    return served;
  }

  // Not named after the test: a parameterized test's name holds a '/'.
  test::TempFolder folder_{"glmrt-mirrors"};
  fs::path root_ = folder_.path();
  MemoryBudget budget_;
  HostServices services_{budget_, 4};
};

TEST_P(IoMirrorsTest, EveryCopyServesReadsAndEachReadIsWholeFromOne) {
  auto io = make(
      {{"threads", "4"}, {"mirrors", copy_folder(1).string() + "\n" + copy_folder(2).string()}});
  ASSERT_EQ(open(*io), GLMRT_OK) << io->last_error();
  const auto served = read_blocks(*io, 48);
  EXPECT_EQ(served[0] + served[1] + served[2], 48);
  for (int copy = 0; copy < 3; ++copy) EXPECT_GT(served[copy], 0) << "copy " << copy;
  // The second file of the set comes from its own path in each copy.
  std::unique_ptr<char, AlignedFree> small(static_cast<char*>(std::aligned_alloc(4096, 4096)));
  glmrt_extent extent{1, 0, 0, 4096, small.get()};
  glmrt_extent_result result{};
  glmrt_io_ticket ticket = 0;
  ASSERT_EQ(io->submit(&extent, 1, &result, &ticket), GLMRT_OK) << io->last_error();
  ASSERT_EQ(io->wait(ticket), GLMRT_OK) << io->last_error();
  EXPECT_EQ(result.bytes, 10u);
  EXPECT_EQ(std::string(small.get(), 10), "0123456789");
}

// A copy held back by its cap is busy longer, so the others take its share.
TEST_P(IoMirrorsTest, ReadsAvoidASlowCopy) {
  auto io = make({{"threads", "4"},
                  {"mirrors", copy_folder(0).string() + "@1MB\n" + copy_folder(1).string()}});
  ASSERT_EQ(open(*io), GLMRT_OK) << io->last_error();
  const auto served = read_blocks(*io, 64);
  EXPECT_GE(served[1], 56) << "the capped copy served " << served[0];
}

// Two copies capped at the same rate read about twice as fast as one: the
// issue's target for bench/io (>= 1.8 x) measured small here. The drive
// itself and a loaded machine (sanitizers, ctest -j) add time the cap does
// not: a low cap keeps that small beside the capped time, and the fastest of
// three alternated runs of each filters a stalled read.
TEST_P(IoMirrorsTest, TwoCappedCopiesReadAboutTwiceAsFastAsOne) {
  auto seconds = [&](std::string mirrors) {
    auto io = make({{"threads", "4"}, {"mirrors", mirrors}});
    EXPECT_EQ(open(*io), GLMRT_OK) << io->last_error();
    const auto t0 = std::chrono::steady_clock::now();
    read_blocks(*io, 64);  // 4 MiB
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const std::string one = copy_folder(0).string() + "@8MB";
  const std::string two = one + "\n" + copy_folder(1).string() + "@8MB";
  double single = 1e9, both = 1e9;
  for (int run = 0; run < 3; ++run) {
    single = std::min(single, seconds(one));
    both = std::min(both, seconds(two));
  }
  EXPECT_GE(single, 0.45) << "the cap was not applied";
  EXPECT_GE(single / both, 1.6) << "one copy " << single << " s, two " << both << " s";
}

TEST_P(IoMirrorsTest, AMirrorThatIsNotACopyIsRefusedAtOpenNamingBothFiles) {
  const fs::path bad = root_ / "bad" / "model";
  const std::string original = (copy_folder(0) / "sub" / "experts.safetensors").string();
  const std::string copy = (bad / "sub" / "experts.safetensors").string();
  auto open_error = [&] {
    auto io = make({{"mirrors", bad.string()}});
    EXPECT_NE(open(*io), GLMRT_OK);
    return std::string(io->last_error());
  };
  write_copy(bad, 'X', 1);
  EXPECT_THAT(open_error(), AllOf(HasSubstr(copy), HasSubstr(original), HasSubstr("bytes")));
  write_copy(bad, 'X', 0, '[');
  EXPECT_THAT(open_error(), AllOf(HasSubstr(copy), HasSubstr("headers differ at byte 8")));
  fs::remove(bad / "small.bin");
  EXPECT_THAT(open_error(),
              AllOf(HasSubstr("cannot open"), HasSubstr((bad / "small.bin").string())));
  auto io = make({{"mirrors", copy_folder(1).string() + "\n" + copy_folder(1).string() + "/"}});
  EXPECT_NE(open(*io), GLMRT_OK);
  EXPECT_THAT(io->last_error(), HasSubstr("twice"));
}

TEST_P(IoMirrorsTest, MirrorSettingsAreChecked) {
  auto message_of = [&](std::string mirrors) -> std::string {
    try {
      make({{"mirrors", std::move(mirrors)}});
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_THAT(message_of("relative/folder"),
              HasSubstr("`relative/folder` is not an absolute folder"));
  EXPECT_THAT(message_of("/mnt/b@fast"), HasSubstr("the read cap after `@`"));
  EXPECT_THAT(message_of(" \n "), HasSubstr("no folder given"));
  EXPECT_EQ(message_of("/mnt/b/model@400MB\n /mnt/c/model \n"), "accepted");
  EXPECT_EQ(message_of("/mnt/user@host/model"), "accepted");  // an `@` before the last `/`
}

INSTANTIATE_TEST_SUITE_P(Plugins, IoMirrorsTest, ::testing::Values("io-buffered", "io-odirect"),
                         [](const auto& info) {
                           return std::string(info.param) == "io-buffered" ? "buffered" : "odirect";
                         });

}  // namespace
}  // namespace glmrt
