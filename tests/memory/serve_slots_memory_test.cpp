// `glmrt serve --slots 256` at the plan's minimum budget: kept conversations
// are emptied, oldest first, so the server's peak RSS (VmHWM) stays within
// memory.budget; counting only the slots' KV caches it reached 25.3-28.8 MiB
// under 24.7 MiB (issue 34).
//
// The minimum is serve's own plan's: its process overhead (the resident
// memory before the model loads, measured) is 0.5-1.1 MiB above `profile
// check`'s for the same profile (more code run before loading) and varies
// by up to 0.45 MiB from run to run. Taken from `profile check`, the minimum
// left the test that much less room than it meant: the "0.9-2.2 MiB of
// overhead" seen since serve --parallel was that difference plus the slots
// filling the margin given (a slot keeps its conversation while the process
// fits the budget). Threads cost little (8 instead of 18 with --http-threads
// 2: under 0.1 MiB); glibc's per-thread arenas did once the tokens' JSON ran
// on the request threads, hence serve's one arena (cli/serve.cpp).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "glmrt_process.h"
#include "server_process.h"

namespace glmrt::serve_slots_memory {
namespace {

namespace fs = std::filesystem;

fs::path write_profile(const std::string& budget) {
  const fs::path file =
      fs::temp_directory_path() / fmt::format("glmrt-slots-{}-{}.yaml", budget, ::getpid());
  std::ofstream(file) << fmt::format(
      "plugins:\n  kernels: kernels-scalar\n  io: io-buffered\n  draft: none\nthreads: 1\n"
      "precision:\n  dense: f32\n  experts: f32\n  kv_cache: f32\n"
      "memory:\n  budget: {}\n  expert_cache: auto\n  pinned: 0\n  max_context: 4096\n"
      "  history: off\ngeneration:\n  temperature: 0.0\n",
      budget);
  return file;
}

// The plan's "minimum" line of `glmrt serve` refusing `profile`'s too small
// budget (the minimum under a budget: prefill in small chunks).
uint64_t serve_minimum(const fs::path& profile) {
  const auto r =
      test::run_glmrt({"serve", "--profile", profile.string(), "--model", test::tiny_model(),
                       "--slots", "256", "--parallel", "1", "--port", "0", "--quiet"});
  EXPECT_EQ(r.exit_status, 1) << r.err;
  EXPECT_NE(r.err.find("is below the minimum"), std::string::npos) << r.err;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first, unit;
    double number = 0;
    if (words >> first >> number >> unit && first == "minimum") {
      const double scale = unit == "GiB"   ? 1 << 30
                           : unit == "MiB" ? 1 << 20
                           : unit == "KiB" ? 1 << 10
                                           : 1;
      return static_cast<uint64_t>(number * scale);
    }
  }
  ADD_FAILURE() << "no minimum in\n" << r.err;
  return 0;
}

uint64_t peak_rss_of(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmHWM:")) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

// `tokens` pseudo-random ids of conversation `seed`, no two sharing a prefix.
std::string prompt(int seed, int tokens) {
  std::string ids = "[" + std::to_string(100 + seed % 800);
  uint32_t x = static_cast<uint32_t>(seed) * 7919u + 1;
  for (int i = 1; i < tokens; ++i) {
    x = x * 1103515245u + 12345u;
    ids += "," + std::to_string((x >> 8) % 1000);
  }
  return ids + "]";
}

TEST(ServeSlotsMemory, ManySlotsStayWithinTheMinimumBudget) {
  const fs::path probe = write_profile("8MiB");
  const uint64_t minimum = serve_minimum(probe);
  fs::remove(probe);
  ASSERT_GT(minimum, 0u);
  // 1.5 MiB above serve's minimum: room for one conversation's KV growth
  // (300 tokens) and the spread of the measured overhead between this
  // probe and the server (up to 0.45 MiB seen; with 1 MiB, 1 run in 10 went
  // 83 KiB past after a low probe); the slots fill the rest.
  const uint64_t budget = minimum + (3 << 19);
  const fs::path profile = write_profile(fmt::format("{}B", budget));
  test::ServerProcess server({"--profile", profile.string(), "--model", test::tiny_model(),
                              "--slots", "256", "--parallel", "1"});
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(60);
  for (int conversation = 0; conversation < 30; ++conversation) {
    const int tokens = 300;
    const auto response = client.Post(
        "/v1/completions",
        fmt::format(R"({{"prompt": {}, "max_tokens": 2}})", prompt(conversation, tokens)),
        "application/json");
    ASSERT_TRUE(response);
    ASSERT_EQ(response->status, 200) << response->body;
  }
  const uint64_t peak = peak_rss_of(server.pid());
  EXPECT_EQ(server.stop(), 0) << server.log();
  fs::remove(profile);
  EXPECT_LE(peak, budget) << "peak " << peak / 1024 << " KiB, budget " << budget / 1024
                          << " KiB (serve's minimum " << minimum / 1024 << " KiB)";
}

}  // namespace
}  // namespace glmrt::serve_slots_memory
