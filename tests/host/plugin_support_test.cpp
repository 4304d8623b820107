// What every in-tree plugin shares (plugins/plugin-support, io-support's
// settings): host memory that the budget sees, rounded growth, setting values
// taken whole, and the host check of create().
#include <byte_rate_limit.h>
#include <glmrt/host/plugin_host.h>
#include <host_buffer.h>
#include <io_settings.h>
#include <plugin_entry.h>
#include <scratch_plan.h>
#include <setting_values.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace glmrt {
namespace {

using plugin_support::HostBuffer;
using ::testing::AllOf;
using ::testing::HasSubstr;

uint64_t plugin_bytes(const MemoryBudget& budget) {
  const auto by_category = budget.by_category();
  const auto it = by_category.find("plugin:alloc");
  return it == by_category.end() ? 0 : it->second;
}

// The cap's clock is the emulated drive's queue: an urgent read (io ABI 1.6)
// takes the place of the first reservation that has not begun, which moves
// later by its time; one already begun keeps its time.
TEST(ByteRateLimit, AnUrgentReadGoesBeforeReadsTheCapHasNotBegun) {
  using std::chrono::microseconds;
  io_support::ByteRateLimit limit(1'000'000, microseconds(0));  // 1 MB/s, no credit
  const uint64_t begun = limit.reserve_place(100'000, false);   // 100 ms, from now
  const uint64_t queued = limit.reserve_place(100'000, false);  // the next 100 ms
  const auto queued_before = limit.due(queued);
  const uint64_t urgent = limit.reserve_place(50'000, true);
  const auto us = [](auto d) { return std::chrono::duration_cast<microseconds>(d).count(); };
  EXPECT_NEAR(us(limit.due(urgent) - limit.due(begun)), 50'000, 10);
  EXPECT_NEAR(us(limit.due(queued) - queued_before), 50'000, 10);
  const uint64_t later = limit.reserve_place(10'000, false);
  EXPECT_NEAR(us(limit.due(later) - limit.due(queued)), 10'000, 10);
  // Nothing queued that has not begun: urgent or not, a read goes last.
  io_support::ByteRateLimit idle(1'000'000, microseconds(0));
  const uint64_t first = idle.reserve_place(1'000, false);
  const uint64_t second = idle.reserve_place(1'000, true);
  EXPECT_GT(idle.due(second), idle.due(first));
  idle.wait_for(first);
  idle.wait_for(second);
  EXPECT_GE(std::chrono::steady_clock::now(), idle.due(second));
}

TEST(HostBuffer, GrowsOnlyWhenAskedForMoreAndReturnsItsMemory) {
  MemoryBudget budget;
  HostServices services(budget, 1);
  {
    HostBuffer buffer(*services.get());
    ASSERT_TRUE(buffer.reserve(1000));
    EXPECT_EQ(plugin_bytes(budget), 1000u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 64, 0u);
    std::byte* first = buffer.data();
    ASSERT_TRUE(buffer.reserve(10));
    EXPECT_EQ(buffer.data(), first) << "a smaller size reuses the memory";
    ASSERT_TRUE(buffer.reserve(1001));
    EXPECT_EQ(plugin_bytes(budget), 1001u) << "the old block is returned when it grows";
  }
  EXPECT_EQ(plugin_bytes(budget), 0u);
}

TEST(HostBuffer, AGranuleRoundsEverySizeUpSoSlowGrowthReusesTheBlock) {
  MemoryBudget budget;
  HostServices services(budget, 1);
  HostBuffer buffer(*services.get(), 64 * 1024);
  ASSERT_TRUE(buffer.reserve(1));
  EXPECT_EQ(buffer.capacity(), 64u * 1024);
  EXPECT_EQ(plugin_bytes(budget), 64u * 1024);
  std::byte* first = buffer.data();
  for (size_t bytes = 2; bytes <= 64 * 1024; bytes *= 2) ASSERT_TRUE(buffer.reserve(bytes));
  EXPECT_EQ(buffer.data(), first);
  ASSERT_TRUE(buffer.reserve(64 * 1024 + 1));
  EXPECT_EQ(plugin_bytes(budget), 128u * 1024);
}

TEST(HostBuffer, RefusalsAreFalseNeverACrash) {
  MemoryBudget budget(4096);
  HostServices services(budget, 1);
  HostBuffer buffer(*services.get(), 64 * 1024);
  EXPECT_FALSE(buffer.reserve(1)) << "64 KiB is over the budget";
  EXPECT_FALSE(buffer.reserve(SIZE_MAX)) << "rounding up must not wrap around";
  EXPECT_EQ(buffer.capacity(), 0u);
  EXPECT_EQ(plugin_bytes(budget), 0u);
}

TEST(HostBuffer, SwapExchangesTheMemory) {
  MemoryBudget budget;
  HostServices services(budget, 1);
  HostBuffer a(*services.get()), b(*services.get());
  ASSERT_TRUE(a.reserve(100));
  std::memcpy(a.data(), "kept", 5);
  a.swap(b);
  EXPECT_EQ(a.capacity(), 0u);
  ASSERT_EQ(b.capacity(), 100u);
  EXPECT_STREQ(b.as<char>(), "kept");
}

TEST(ScratchPlan, SlicesAreAlignedAndDoNotOverlap) {
  plugin_support::ScratchPlan plan;
  const size_t a = plan.add(1), b = plan.add(64), c = plan.add(65), d = plan.add(0);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 64u);
  EXPECT_EQ(c, 128u);
  EXPECT_EQ(d, 256u);
  EXPECT_EQ(plan.total(), 256u);
}

TEST(SettingValues, IntegersAndFlagsAreTakenWholeOrNotAtAll) {
  int n = 7;
  EXPECT_TRUE(plugin_support::parse_integer(std::string_view("12"), 1, 16, n));
  EXPECT_EQ(n, 12);
  for (const char* bad : {"", "0", "17", "3x", " 3", "-1", "99999999999"})
    EXPECT_FALSE(plugin_support::parse_integer(std::string_view(bad), 1, 16, n)) << bad;
  EXPECT_EQ(n, 12);
  bool flag = false;
  EXPECT_TRUE(plugin_support::parse_flag("true", flag));
  EXPECT_TRUE(flag);
  EXPECT_FALSE(plugin_support::parse_flag("yes", flag));
  EXPECT_FALSE(plugin_support::parse_flag("", flag));
  EXPECT_TRUE(flag);
  EXPECT_EQ(plugin_support::setting_text(nullptr), "");
}

TEST(IoSettings, EachPluginTakesItsOwnKeysAndBounds) {
  const io_support::IoSettingsRules buffered{"io-buffered", {}, 1024, true};
  const io_support::IoSettingsRules direct{
      "io-odirect",
      {.threads = 4, .drop_after_read = false, .max_bytes_per_second = 0, .mirrors = {}},
      64,
      false};
  io_support::IoSettings out;
  std::string error;

  ASSERT_TRUE(parse_io_settings(direct, nullptr, 0, out, error));
  EXPECT_EQ(out.threads, 4) << "the plugin's default";
  const glmrt_setting many[] = {{"threads", "1024"}, {"drop_after_read", "true"}};
  ASSERT_TRUE(parse_io_settings(buffered, many, 2, out, error)) << error;
  EXPECT_EQ(out.threads, 1024);
  EXPECT_TRUE(out.drop_after_read);

  EXPECT_FALSE(parse_io_settings(direct, many, 1, out, error));
  EXPECT_EQ(error, "io-odirect: setting `threads` expects an integer from 1 to 64, found `1024`");
  const glmrt_setting drop[] = {{"drop_after_read", "true"}};
  EXPECT_FALSE(parse_io_settings(direct, drop, 1, out, error));
  EXPECT_EQ(error,
            "io-odirect: unknown setting `drop_after_read` (valid settings: threads, "
            "max_bytes_per_second, cap_credit_seconds, mirrors)");
  const glmrt_setting typo[] = {{"thread", "2"}};
  EXPECT_FALSE(parse_io_settings(buffered, typo, 1, out, error));
  EXPECT_EQ(error,
            "io-buffered: unknown setting `thread` (valid settings: threads, drop_after_read, "
            "max_bytes_per_second, cap_credit_seconds, mirrors)");
  EXPECT_EQ(out.cap_credit, io_support::ByteRateLimit::kBurst) << "the default credit";
  const glmrt_setting no_credit[] = {{"cap_credit_seconds", "0"}};
  ASSERT_TRUE(parse_io_settings(direct, no_credit, 1, out, error)) << error;
  EXPECT_EQ(out.cap_credit.count(), 0);
  const glmrt_setting half[] = {{"cap_credit_seconds", "0.5"}};
  ASSERT_TRUE(parse_io_settings(direct, half, 1, out, error)) << error;
  EXPECT_EQ(out.cap_credit, std::chrono::milliseconds(500));
  const glmrt_setting maybe[] = {{"drop_after_read", "maybe"}};
  EXPECT_FALSE(parse_io_settings(buffered, maybe, 1, out, error));
  EXPECT_EQ(error, "io-buffered: setting `drop_after_read` expects true or false, found `maybe`");

  // max_bytes_per_second, the read cap both plugins take: a count or a size.
  for (const auto& [text, bytes] :
       std::vector<std::pair<const char*, uint64_t>>{{"1", 1},
                                                     {"250000000", 250000000},
                                                     {"200MB", 200000000},
                                                     {"1.5GiB", 1610612736},
                                                     {"64KiB", 65536}}) {
    const glmrt_setting cap[] = {{"max_bytes_per_second", text}};
    ASSERT_TRUE(parse_io_settings(direct, cap, 1, out, error)) << text << ": " << error;
    EXPECT_EQ(out.max_bytes_per_second, bytes) << text;
  }
  for (const char* bad : {"0", "0.5", "-1", "MB", "12 MB", "1e9", "5furlongs", ""}) {
    const glmrt_setting cap[] = {{"max_bytes_per_second", bad}};
    EXPECT_FALSE(parse_io_settings(buffered, cap, 1, out, error)) << bad;
    EXPECT_NE(error.find("max_bytes_per_second"), std::string::npos) << error;
  }
}

TEST(HostRefusal, NamesThePluginAndTheServicesItNeeds) {
  MemoryBudget budget;
  HostServices services(budget, 1);
  const glmrt_host_services current = *services.get();
  EXPECT_EQ(plugin_support::host_refusal("p", &current, GLMRT_ABI_MINOR_DRAFT), "");

  EXPECT_THAT(plugin_support::host_refusal("p", nullptr, 0),
              AllOf(HasSubstr("p needs host services of ABI 1.0"), HasSubstr("none")));
  glmrt_host_services other = current;
  other.abi_major = 2;
  EXPECT_THAT(plugin_support::host_refusal("p", &other, 0), HasSubstr("the host's are 2."));
  glmrt_host_services old = current;
  old.abi_minor = 0;
  old.struct_size = plugin_support::host_services_bytes(0);
  EXPECT_EQ(plugin_support::host_refusal("kernels", &old, 0), "") << "1.0 serves a kernels plugin";
  EXPECT_THAT(plugin_support::host_refusal("io", &old, GLMRT_ABI_MINOR_ASYNC_IO),
              HasSubstr("io needs host services of ABI 1.1 or newer; the host's are 1.0"));
  glmrt_host_services no_threads = current;
  no_threads.start_thread = nullptr;
  EXPECT_THAT(plugin_support::host_refusal("io", &no_threads, GLMRT_ABI_MINOR_ASYNC_IO),
              HasSubstr("services missing"));
  glmrt_host_services no_memory = current;
  no_memory.alloc = nullptr;
  EXPECT_THAT(plugin_support::host_refusal("kernels", &no_memory, 0),
              HasSubstr("services missing"));
}

}  // namespace
}  // namespace glmrt
