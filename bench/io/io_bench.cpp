// io plugins on GLM-5-sized experts: each iteration reads a random set of
// experts (one read per expert, widened to the plugin's alignment, into
// 2 MiB-aligned MADV_HUGEPAGE slots) with 1-8 reads in flight, after the file
// has left the page cache. Reported: GB/s, and per-expert latency p50/p99
// (submission to completion). Baseline in the same run: large sequential
// O_DIRECT reads into a huge-page buffer, the most the drive gives.
//
//   build/bench/io/io_bench [--benchmark_filter=...]
//   GLMRT_IO_BENCH_FILE=/path/experts.bin GLMRT_IO_BENCH_GB=8 build/bench/io/io_bench
#include "expert_file.h"

#include <glmrt/base/error.h>
#include <glmrt/base/huge_pages.h>
#include <glmrt/base/page_cache.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/host/plugin_host.h>

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>

namespace glmrt::io_bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const ExpertFile& expert_file() {
  static const ExpertFile file = open_expert_file();
  return file;
}

/// Experts one iteration reads ($GLMRT_IO_BENCH_EXPERTS, default 48: 0.9 GB).
uint64_t experts_per_iteration() {
  const char* value = std::getenv("GLMRT_IO_BENCH_EXPERTS");
  const uint64_t n = value ? std::strtoull(value, nullptr, 10) : 48;
  return std::clamp<uint64_t>(n, 1, expert_file().experts);
}

void evict(benchmark::State& state) {
  state.PauseTiming();
  if (std::string problem = evict_from_page_cache(expert_file().path); !problem.empty())
    state.SkipWithError(problem.c_str());
  state.ResumeTiming();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t at = std::min(values.size() - 1, static_cast<size_t>(p * (values.size() - 1) + 0.5));
  return values[at];
}

/// Random distinct experts for iteration `iteration` (same sets for every plugin).
std::vector<uint64_t> pick_experts(uint64_t iteration, uint64_t n) {
  std::vector<uint64_t> all(expert_file().experts);
  std::iota(all.begin(), all.end(), 0);
  std::mt19937_64 rng(1234 + iteration);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(n);
  return all;
}

void BM_SequentialDirectBaseline(benchmark::State& state) {
  const ExpertFile& file = expert_file();
  const uint64_t chunk = static_cast<uint64_t>(state.range(0)) << 20;
  const uint64_t total = experts_per_iteration() * kExpertBytes / chunk * chunk;
  const int fd = ::open(file.path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    state.SkipWithError("O_DIRECT open refused");
    return;
  }
  HugePageBlock buffer(chunk, nullptr, "io_bench");
  std::memset(buffer.data(), 0, buffer.size());  // fault the pages in before timing
  uint64_t iteration = 0, bytes = 0;
  for (auto _ : state) {
    evict(state);
    std::mt19937_64 rng(99 + iteration++);
    const uint64_t start = (rng() % ((file.size - total) / chunk)) * chunk;
    for (uint64_t at = start; at < start + total; at += chunk) {
      const ssize_t got = ::pread(fd, buffer.data(), chunk, static_cast<off_t>(at));
      if (got != static_cast<ssize_t>(chunk)) {
        state.SkipWithError("short sequential read");
        break;
      }
    }
    bytes += total;
  }
  ::close(fd);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

struct InFlight {
  IoTicket ticket;
  Clock::time_point submitted;
  int slot;
};

/// Where an expert's bytes lie: one extent, as a container lays an expert out,
/// or three (gate, up, down) in three regions a third of the file apart, as a
/// GGUF's `ffn_{gate,up,down}_exps` tensors hold them: the same bytes per
/// expert, read as three extents submitted together.
enum class ExpertLayout { kContiguous, kGgufThreeTensors };

std::vector<PlannedRead> plan_expert(const IoChannel& channel, ExpertLayout layout, uint64_t expert,
                                     std::byte* slot) {
  const ExpertFile& file = expert_file();
  if (layout == ExpertLayout::kContiguous)
    return {channel.plan(0, file.offset(expert), kExpertBytes, slot)};
  const uint64_t extent = kExpertBytes / 3;
  const uint64_t region = file.experts * extent;
  std::vector<PlannedRead> reads;
  for (uint64_t matrix = 0; matrix < 3; ++matrix) {
    // Each extent lands at its own aligned place in the slot, as the expert
    // store widens each of a GGUF expert's reads on its own.
    std::byte* destination = slot + matrix * align_up(extent + 2 * channel.alignment(), 4096);
    reads.push_back(
        channel.plan(0, kHeaderBytes + matrix * region + expert * extent, extent, destination));
  }
  return reads;
}

/// The timed loop the expert benchmarks share: per iteration, `evict`, then
/// the iteration's experts with as many experts in flight as there are slots.
void read_experts(benchmark::State& state, IoChannel& channel, int in_flight,
                  const std::function<void()>& evict_all,
                  ExpertLayout layout = ExpertLayout::kContiguous) {
  const uint64_t slot_bytes = align_up(kExpertBytes + 6 * channel.alignment(), 4096) + 3 * 4096;
  std::vector<HugePageBlock> slots;
  for (int s = 0; s < in_flight; ++s) {
    slots.emplace_back(slot_bytes, nullptr, "io_bench");
    std::memset(slots.back().data(), 0, slot_bytes);  // pages in before timing, as a warm pool
  }
  const uint64_t n = experts_per_iteration();
  std::vector<double> latencies;
  uint64_t iteration = 0, bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::vector<uint64_t> experts = pick_experts(iteration++, n);
    state.ResumeTiming();
    evict_all();
    std::deque<InFlight> queue;
    std::vector<int> free_slots(static_cast<size_t>(in_flight));
    std::iota(free_slots.begin(), free_slots.end(), 0);
    size_t next = 0;
    while (next < experts.size() || !queue.empty()) {
      while (next < experts.size() && !free_slots.empty()) {
        const int slot = free_slots.back();
        free_slots.pop_back();
        const std::vector<PlannedRead> reads =
            plan_expert(channel, layout, experts[next++], slots[slot].data());
        queue.push_back({channel.submit(reads), Clock::now(), slot});
      }
      InFlight done = std::move(queue.front());
      queue.pop_front();
      if (auto failure = channel.wait(done.ticket)) {
        state.SkipWithError(failure->message.c_str());
        return;
      }
      latencies.push_back(std::chrono::duration<double>(Clock::now() - done.submitted).count());
      free_slots.push_back(done.slot);
    }
    bytes += n * kExpertBytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["expert_p50_ms"] = 1e3 * percentile(latencies, 0.50);
  state.counters["expert_p99_ms"] = 1e3 * percentile(latencies, 0.99);
  state.counters["in_flight"] = in_flight;
}

PluginHandle<plugin::Io> make_io(benchmark::State& state, HostServices& services,
                                 const char* plugin, std::map<std::string, std::string> settings) {
  try {
    return PluginHost(std::vector<fs::path>{GLMRT_PLUGIN_DIR})
        .create_io(PluginChoice{plugin, std::move(settings), {}}, services);
  } catch (const Error& e) {
    state.SkipWithError(e.what());
    return {};
  }
}

// `layout`: experts as a container lays them out, or as a GGUF does (what a
// re-layout of a GGUF's experts into one extent each would gain on the drive).
void BM_Experts(benchmark::State& state, const char* plugin, ExpertLayout layout) {
  const int in_flight = static_cast<int>(state.range(0));
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Io> io =
      make_io(state, services, plugin, {{"threads", std::to_string(in_flight)}});
  if (!io) return;
  IoChannel channel(*io, io.info().abi_minor, {expert_file().path});
  read_experts(
      state, channel, in_flight, [&] { evict(state); }, layout);
}

/// The read cap of each copy in BM_Mirrors ($GLMRT_IO_BENCH_MIRROR_CAP,
/// default 300MB: two capped copies stay below this drive's ~1.5 GB/s).
std::string mirror_cap() {
  const char* value = std::getenv("GLMRT_IO_BENCH_MIRROR_CAP");
  return value && *value ? value : "300MB";
}

// `mirrors`: the same reads from one capped copy, then from two, each read
// sent to the less busy copy; with two copies on two drives, leave the cap
// off (GLMRT_IO_BENCH_MIRROR_CAP=none) and measure the drives themselves.
void BM_Mirrors(benchmark::State& state, const char* plugin) {
  const int copies = static_cast<int>(state.range(0));
  const ExpertFile& file = expert_file();
  static const ExpertFile mirror = open_mirror_file(file);
  const std::string cap = mirror_cap() == "none" ? "" : std::string("@").append(mirror_cap());
  std::string mirrors = file.path.parent_path().string() + cap;
  if (copies == 2) mirrors.append("\n").append(mirror.path.parent_path().string()).append(cap);
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Io> io =
      make_io(state, services, plugin, {{"threads", "4"}, {"mirrors", mirrors}});
  if (!io) return;
  IoChannel channel(*io, io.info().abi_minor, {file.path});
  read_experts(state, channel, 4, [&] {
    state.PauseTiming();
    for (const fs::path& path : {file.path, mirror.path})
      if (std::string problem = evict_from_page_cache(path); !problem.empty())
        state.SkipWithError(problem.c_str());
    state.ResumeTiming();
  });
  state.counters["copies"] = copies;
}

// Three passes each, on the wall clock: the reads run on other threads.
void timed_passes(benchmark::internal::Benchmark* b) {
  b->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
}

// Every io plugin at the same depths of reads in flight.
void in_flight_depths(benchmark::internal::Benchmark* b) {
  timed_passes(b->Arg(1)->Arg(2)->Arg(4)->Arg(8));
}

BENCHMARK(BM_SequentialDirectBaseline)->Arg(64)->Apply(timed_passes);
BENCHMARK_CAPTURE(BM_Experts, io_odirect, "io-odirect", ExpertLayout::kContiguous)
    ->Apply(in_flight_depths);
BENCHMARK_CAPTURE(BM_Experts, io_buffered, "io-buffered", ExpertLayout::kContiguous)
    ->Apply(in_flight_depths);
BENCHMARK_CAPTURE(BM_Experts, gguf_layout_io_odirect, "io-odirect", ExpertLayout::kGgufThreeTensors)
    ->Apply(in_flight_depths);
BENCHMARK_CAPTURE(BM_Experts, gguf_layout_io_buffered, "io-buffered",
                  ExpertLayout::kGgufThreeTensors)
    ->Apply(in_flight_depths);
BENCHMARK_CAPTURE(BM_Mirrors, io_odirect, "io-odirect")->Arg(1)->Arg(2)->Apply(timed_passes);
BENCHMARK_CAPTURE(BM_Mirrors, io_buffered, "io-buffered")->Arg(1)->Arg(2)->Apply(timed_passes);

}  // namespace
}  // namespace glmrt::io_bench

BENCHMARK_MAIN();
