// The usage history on disk: round trip, unusable files ignored with one
// warning, an interrupted write, writers merging (threads of one process and
// separate processes), STATS import/export.
#include "temp_folder.h"

#include <glmrt/base/error.h>
#include <glmrt/history/history_file.h>
#include <glmrt/history/model_id.h>
#include <glmrt/history/stats_file.h>
#include <glmrt/history/usage_history.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace glmrt {
namespace {

using test::TempFolder;
using ::testing::HasSubstr;

constexpr const char* kHistId = "0123456789abcdef0123456789abcdef";

std::string slurp_history(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit_history(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

ExpertUsage sample_usage() {
  ExpertUsage u(3, 4);
  u.add(1, 2, 7);
  u.add(1, 0, 1);
  u.add(2, 3, 40);  // the MTP row
  return u;
}

TEST(UsageHistory, RoundTripThroughTheFile) {
  TempFolder dir;
  {
    UsageHistory h(dir.path(), kHistId, 3, 4);
    EXPECT_EQ(h.loaded_status(), HistoryStatus::missing);
    EXPECT_EQ(h.file(), dir.path() / kHistId / "expert-usage");
    h.add(sample_usage());
    const int32_t ids[] = {2, 2, 3};
    h.record(1, ids);
    h.save();
    EXPECT_TRUE(h.unsaved().empty());
  }
  UsageHistory again(dir.path(), kHistId, 3, 4);
  EXPECT_EQ(again.loaded_status(), HistoryStatus::ok);
  EXPECT_EQ(again.totals().count(1, 2), 9u);
  EXPECT_EQ(again.totals().count(1, 3), 1u);
  EXPECT_EQ(again.totals().count(2, 3), 40u);
  EXPECT_EQ(again.totals().total(), 51u);
}

TEST(UsageHistory, FolderFollowsXdgCacheHome) {
  TempFolder dir;
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  EXPECT_EQ(history_root(std::nullopt), dir.path() / "glmrt");
  EXPECT_EQ(history_root(std::filesystem::path("/elsewhere")), "/elsewhere");
  if (old)
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
}

struct BadHistoryCase {
  const char* name;
  std::function<std::string(const std::string&)> damage;
  HistoryStatus status;
  const char* says;
};

class BadHistory : public ::testing::TestWithParam<BadHistoryCase> {};

TEST_P(BadHistory, IsIgnoredWithOneWarning) {
  TempFolder dir;
  const auto file = dir.path() / kHistId / "expert-usage";
  spit_history(file, GetParam().damage(format_history(kHistId, sample_usage())));
  ::testing::internal::CaptureStderr();
  UsageHistory h(dir.path(), kHistId, 3, 4);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(h.loaded_status(), GetParam().status);
  EXPECT_TRUE(h.totals().empty());  // never partly used
  EXPECT_THAT(err, HasSubstr(GetParam().says));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  // The next save replaces it, except a later version's file.
  const int32_t one[] = {1};
  h.record(0, one);
  ::testing::internal::CaptureStderr();
  h.save();
  ::testing::internal::GetCapturedStderr();
  UsageHistory after(dir.path(), kHistId, 3, 4);
  if (GetParam().status == HistoryStatus::future_version)
    EXPECT_EQ(after.loaded_status(), HistoryStatus::future_version);
  else
    EXPECT_EQ(after.totals().total(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    History, BadHistory,
    ::testing::Values(
        BadHistoryCase{"truncated", [](const std::string& t) { return t.substr(0, t.size() / 2); },
                       HistoryStatus::invalid, "truncated"},
        BadHistoryCase{"cut_before_end",
                       [](const std::string& t) { return t.substr(0, t.rfind("end ")); },
                       HistoryStatus::invalid, "truncated"},
        BadHistoryCase{"flipped_digit",
                       [](const std::string& t) {
                         std::string s = t;
                         s[s.find("1 2 7")] = '2';
                         return s;
                       },
                       HistoryStatus::invalid, "checksum"},
        BadHistoryCase{"garbage", [](const std::string&) { return std::string("\x01\x02zz\n"); },
                       HistoryStatus::invalid, "not a glmrt expert usage file"},
        BadHistoryCase{"empty", [](const std::string&) { return std::string(); },
                       HistoryStatus::invalid, "not a glmrt"},
        BadHistoryCase{"foreign",
                       [](const std::string&) {
                         return format_history("ffffffffffffffffffffffffffffffff", sample_usage());
                       },
                       HistoryStatus::foreign, "another model"},
        BadHistoryCase{
            "other_shape",
            [](const std::string&) { return format_history(kHistId, ExpertUsage(5, 4)); },
            HistoryStatus::foreign, "shape"},
        BadHistoryCase{"future_version",
                       [](const std::string& t) {
                         std::string s = t;
                         s.replace(0, s.find('\n'), "glmrt-expert-usage 9");
                         return s;
                       },
                       HistoryStatus::future_version, "later glmrt"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(UsageHistory, InterruptedWriteLeavesTheOldFile) {
  TempFolder dir;
  const auto file = dir.path() / "expert-usage";
  write_file_atomically(file, "old content\n");
  EXPECT_THROW(write_file_atomically(file, "new content\n",
                                     [] { throw std::runtime_error("killed before the rename"); }),
               std::runtime_error);
  EXPECT_EQ(slurp_history(file), "old content\n");
  // No temporary file is left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST(UsageHistory, TwoWritersMergeTheirCounts) {
  TempFolder dir;
  UsageHistory a(dir.path(), kHistId, 3, 4), b(dir.path(), kHistId, 3, 4);
  const int32_t ids_a[] = {0, 1}, ids_b[] = {1, 3};
  a.record(0, ids_a);
  b.record(0, ids_b);
  a.save();
  b.save();  // re-reads a's counts and adds its own
  a.record(0, ids_a);
  a.save();
  UsageHistory c(dir.path(), kHistId, 3, 4);
  EXPECT_EQ(c.totals().count(0, 0), 2u);
  EXPECT_EQ(c.totals().count(0, 1), 3u);
  EXPECT_EQ(c.totals().count(0, 3), 1u);
}

TEST(UsageHistory, ConcurrentProcessesLoseNoCount) {
  TempFolder dir;
  constexpr int kProcesses = 4, kSaves = 25;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        UsageHistory h(dir.path(), kHistId, 3, 4);
        for (int s = 0; s < kSaves; ++s) {
          const int32_t id[] = {p % 4};
          h.record(1, id);
          h.save();
        }
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  UsageHistory h(dir.path(), kHistId, 3, 4);
  EXPECT_EQ(h.loaded_status(), HistoryStatus::ok);
  EXPECT_EQ(h.totals().layer_total(1), uint64_t{kProcesses * kSaves});
}

TEST(UsageHistory, ResetRemovesTheFile) {
  TempFolder dir;
  UsageHistory h(dir.path(), kHistId, 3, 4);
  h.add(sample_usage());
  h.save();
  ASSERT_TRUE(std::filesystem::exists(h.file()));
  h.reset();
  EXPECT_FALSE(std::filesystem::exists(h.file()));
  EXPECT_TRUE(h.totals().empty());
}

TEST(StatsFile, ImportExportRoundTrip) {
  const ExpertUsage u = sample_usage();
  const std::string text = format_stats(u);
  EXPECT_EQ(text, "1 0 1\n1 2 7\n2 3 40\n");
  const ExpertUsage back = parse_stats(text + "\n", 3, 4, "s");
  EXPECT_EQ(back.total(), u.total());
  EXPECT_EQ(back.count(2, 3), 40u);
}

TEST(StatsFile, BadLinesNameTheLine) {
  try {
    parse_stats("1 0 1\n9 0 1\n", 3, 4, "seed.stats");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("seed.stats:2"));
  }
  EXPECT_THROW(parse_stats("1 0\n", 3, 4, "s"), Error);
  EXPECT_THROW(parse_stats("1 0 1 5\n", 3, 4, "s"), Error);
}

TEST(StatsFile, CountsThatWouldWrapAreRefusedNamingTheLine) {
  // Three times 2^63 - 1 passes 2^64: it wrapped to a small total before.
  const std::string line = "1 0 9223372036854775807\n";
  try {
    parse_stats(line + line + line, 3, 4, "big.stats");
    FAIL() << "a wrapping count was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("big.stats:3"));
    EXPECT_THAT(e.what(), HasSubstr("2^64 - 1"));
  }
  // A count of 2^64 is no count at all.
  EXPECT_THROW(parse_stats("1 0 18446744073709551616\n", 3, 4, "s"), Error);
  // The largest count is kept exactly.
  EXPECT_EQ(parse_stats("1 0 18446744073709551615\n", 3, 4, "s").total(), UINT64_MAX);
}

TEST(StatsFile, QuotedLinesAreEscaped) {
  try {
    parse_stats("1 0 x\x1b[2J\n", 3, 4, "s");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("x\\x1b[2J"));
    EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos);
  }
}

TEST(ExpertUsage, TotalsNeverWrap) {
  ExpertUsage u(2, 2);
  u.add(0, 0, UINT64_MAX - 1);
  EXPECT_THROW(u.add(1, 1, 2), Error);
  EXPECT_EQ(u.total(), UINT64_MAX - 1);  // unchanged by the refused addition
  ExpertUsage more(2, 2);
  more.add(1, 0, 5);
  EXPECT_THROW(u.add(more), Error);
  u.add(1, 1, 1);
  EXPECT_EQ(u.total(), UINT64_MAX);
}

TEST(UsageHistory, ACountLineSumPastTwoTo64IsCorrupt) {
  // Checksummed like a real file, but no glmrt writes counts that wrap.
  const std::string body =
      "glmrt-expert-usage 1\nmodel m\nshape 3 4\n1 0 18446744073709551615\n1 1 1\n";
  ContentHash hash;
  hash.update(body);
  const HistoryRead read =
      parse_history(body + "end " + hash.hex().substr(0, 16) + "\n", "m", 3, 4);
  EXPECT_EQ(read.status, HistoryStatus::invalid);
  EXPECT_THAT(read.problem, HasSubstr("2^64 - 1"));
  ExpertUsage u(3, 4);
  u.add(1, 0, UINT64_MAX);
  const HistoryRead whole = parse_history(format_history("m", u), "m", 3, 4);
  EXPECT_EQ(whole.status, HistoryStatus::ok);
  EXPECT_EQ(whole.usage.total(), UINT64_MAX);
}

/// A history path that is no history file: /dev/zero, a FIFO, a huge sparse
/// file. Each is reported at once and never read (it was read forever or
/// waited on), and the history starts empty.
class HostileHistory : public ::testing::TestWithParam<std::string> {};

TEST_P(HostileHistory, IsReportedWithoutReadingIt) {
  TempFolder dir;
  const auto file = dir.path() / kHistId / "expert-usage";
  std::filesystem::create_directories(file.parent_path());
  std::string says;
  if (GetParam() == "dev_zero") {
    std::filesystem::create_symlink("/dev/zero", file);
    says = "a character device";
  } else if (GetParam() == "fifo") {
    ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
    says = "a named pipe";
  } else {
    std::ofstream(file).close();
    ASSERT_EQ(::truncate(file.c_str(), off_t{1} << 30), 0);
    says = "holds 1073741824 bytes";
  }
  ::testing::internal::CaptureStderr();
  UsageHistory h(dir.path(), kHistId, 3, 4);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(h.loaded_status(), HistoryStatus::unreadable);
  EXPECT_TRUE(h.totals().empty());
  EXPECT_THAT(err, HasSubstr(file.string()));
  EXPECT_THAT(err, HasSubstr(says));
}

INSTANTIATE_TEST_SUITE_P(Kinds, HostileHistory, ::testing::Values("dev_zero", "fifo", "sparse"));

TEST(AtomicFile, RefusesToReplaceADeviceOrFifo) {
  TempFolder dir;
  ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
  for (const std::filesystem::path& target :
       {std::filesystem::path("/dev/null"), dir.path() / "fifo"}) {
    try {
      write_file_atomically(target, "text\n");
      FAIL() << target << " was replaced";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("glmrt writes only regular files"));
    }
  }
  EXPECT_TRUE(std::filesystem::is_fifo(dir.path() / "fifo"));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace glmrt
