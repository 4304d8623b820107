// y = x . W^T through each kernels plugin at GLM-5's and DeepSeek-V3's real shapes, for
// S in {1, 4, 8, 16, 64, 256} and every weight format, next to two baselines measured in
// the same run with the same thread count:
//   baseline/memory_read   streaming read of 1 GiB (>> last-level cache)
//   baseline/int8_dot_l1   int8 dot-product loop on data in L1
// Each kernel benchmark reports weight bytes/s and FLOP/s, and its ratios to
// the baselines (bw_ratio against a read of the same size made after every
// call, bw_ratio_run against baseline/memory_read, int8_ratio) plus, at S > 1,
// its time over the S = 1 time of the same plugin/shape/format (time_vs_s1).
//
// Threads: --threads=N or $GLMRT_BENCH_THREADS (default 2); weight working
// set: --working_set_mb=N (default 512). Plugins: every
// libglmrt-kernels-*.so of the build, or $GLMRT_BENCH_PLUGINS (':'-separated paths).
#include "baselines.h"
#include "weight_copies.h"

#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Shape {
  const char* name;
  int64_t O, I;
  bool expert;  // routed-expert shapes: the bandwidth targets
};

// GLM-5's, then DeepSeek-V3's (ds_*: hidden 7168, 128 heads, q LoRA 1536) where
// they differ, so a shape one model kind has can be compared with the other's.
constexpr Shape kShapes[] = {
    {"expert_gate_up", 2048, 6144, true},
    {"expert_down", 6144, 2048, true},
    {"q_a", 2048, 6144, false},
    {"q_b", 16384, 2048, false},
    {"kv_a", 576, 6144, false},
    {"kv_b", 28672, 512, false},
    {"o_proj", 6144, 16384, false},
    {"lm_head_slice", 16384, 6144, false},
    {"ds_expert_gate_up", 2048, 7168, true},
    {"ds_expert_down", 7168, 2048, true},
    {"ds_q_a", 1536, 7168, false},
    {"ds_q_b", 24576, 1536, false},
    {"ds_kv_a", 576, 7168, false},
    {"ds_o_proj", 7168, 16384, false},
    {"ds_lm_head_slice", 16384, 7168, false},
};
// 4 and 8: batched decoding (--parallel); 64 and 256: prefill chunks (a
// 256-token prompt, its experts' shares).
constexpr int64_t kBatchSizes[] = {1, 4, 8, 16, 64, 256};
constexpr size_t kReadBufferBytes = 1ull << 30;

struct Format {
  const char* name;
  uint32_t type;
  uint32_t group_size;
};
constexpr Format kFormats[] = {
    {"f32", GLMRT_F32, 0},
    {"bf16", GLMRT_BF16, 0},
    {"int8", GLMRT_I8, 0},
    {"int4", GLMRT_I4, 0},
    {"int3", GLMRT_I3, 0},
    {"int2", GLMRT_I2, 0},
    {"int8-g64", GLMRT_I8, 64},
    {"int4-g64", GLMRT_I4, 64},
    {"int3-g64", GLMRT_I3, 64},
    {"int2-g64", GLMRT_I2, 64},
    {"int4-k32", GLMRT_I4K, 256},
    {"int3-k32", GLMRT_I3K, 256},
    {"int2-k16", GLMRT_I2K, 256},
    // ggml's types (ABI 1.5) that kernels-avx2 runs with int8 activations;
    // the speed target compares the first four with int4-g64 at S = 1.
    {"q4_k", plugin::ggml_element_type(GLMRT_GGML_Q4_K), 0},
    {"q2_k", plugin::ggml_element_type(GLMRT_GGML_Q2_K), 0},
    {"iq2_xxs", plugin::ggml_element_type(GLMRT_GGML_IQ2_XXS), 0},
    {"iq4_xs", plugin::ggml_element_type(GLMRT_GGML_IQ4_XS), 0},
    {"q8_0", plugin::ggml_element_type(GLMRT_GGML_Q8_0), 0},
    {"q6_k", plugin::ggml_element_type(GLMRT_GGML_Q6_K), 0},
    {"q4_0", plugin::ggml_element_type(GLMRT_GGML_Q4_0), 0},
};

/// Baseline rates, filled by the baseline benchmarks (which run first) or, when
/// a filter left them out, measured briefly on first use.
struct Baselines {
  double read_bytes_per_second = 0;
  double int8_macs_per_second = 0;
};

class Bench {
 public:
  Bench(int threads, uint64_t working_set_bytes)
      : threads_(threads), working_set_bytes_(working_set_bytes) {}

  void memory_read(benchmark::State& state) {
    ensure_read_buffer();
    uint64_t checksum = 0;
    const auto start = Clock::now();
    for (auto _ : state) checksum += stream_read(read_buffer_->data(), kReadBufferBytes, threads_);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    benchmark::DoNotOptimize(checksum);
    baselines_.read_bytes_per_second =
        static_cast<double>(kReadBufferBytes) * state.iterations() / seconds;
    state.SetBytesProcessed(static_cast<int64_t>(kReadBufferBytes) * state.iterations());
    state.counters["threads"] = threads_;
  }

  void int8_dot(benchmark::State& state) {
    constexpr int64_t kRepeats = 20000;
    int64_t macs = 0;
    const auto start = Clock::now();
    for (auto _ : state) macs += int8_dot_in_l1(threads_, kRepeats);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    baselines_.int8_macs_per_second = static_cast<double>(macs) / seconds;
    state.counters["MAC/s"] =
        benchmark::Counter(static_cast<double>(macs), benchmark::Counter::kIsRate);
    state.counters["threads"] = threads_;
  }

  void matmul(benchmark::State& state, const fs::path& plugin,
              const std::map<std::string, std::string>& settings, const Shape& shape,
              const Format& format, int64_t S) {
    measure_missing_baselines();
    MemoryBudget budget;
    HostServices services(budget, threads_);
    PluginHandle<plugin::Kernels> kernels =
        PluginHost(std::vector<fs::path>{})
            .create_kernels(PluginChoice{plugin.string(), settings, {}}, services);
    glmrt_weight_format wf{};
    wf.struct_size = sizeof(wf);
    wf.element_type = format.type;
    wf.group_size = format.group_size;
    wf.alignment = 64;
    if (!kernels->supports(wf)) {
      state.SkipWithError("format not supported by this plugin");
      return;
    }
    WeightCopies weights(wf, shape.O, shape.I, working_set_bytes_);
    // Rows packed as the engine packs resident weights at load (ABI 1.7),
    // unless the run's `pack` setting is off.
    if (PluginHost(std::vector<fs::path>{}).inspect(plugin).abi_minor >=
        GLMRT_ABI_MINOR_ROW_PACKING) {
      try {
        weights.pack_rows(*kernels);
      } catch (const std::exception& e) {
        state.SkipWithError(e.what());
        return;
      }
    }
    std::vector<float> x(static_cast<size_t>(S * shape.I));
    for (size_t k = 0; k < x.size(); ++k)
      x[k] = static_cast<float>((k * 7919) % 2001) / 1000.0f - 1.0f;
    std::vector<float> y(static_cast<size_t>(S * shape.O));
    size_t copy = 0;
    double seconds = 0;
    double paired_read_seconds = 0;
    for (auto _ : state) {
      const auto start = Clock::now();
      if (kernels->matmul(x.data(), S, weights.view(copy), y.data()) != GLMRT_OK) {
        state.SkipWithError(kernels->last_error());
        return;
      }
      benchmark::ClobberMemory();
      const double call_seconds = std::chrono::duration<double>(Clock::now() - start).count();
      state.SetIterationTime(call_seconds);
      seconds += call_seconds;
      paired_read_seconds += timed_read(weights.bytes_per_copy());
      copy = (copy + 1) % weights.count();
    }
    const double iterations = static_cast<double>(state.iterations());
    const double bytes = static_cast<double>(weights.bytes_per_copy()) * iterations;
    const double macs = static_cast<double>(S * shape.O * shape.I) * iterations;
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.counters["weight_B/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsRate);
    state.counters["FLOP/s"] = benchmark::Counter(2 * macs, benchmark::Counter::kIsRate);
    // Neighbours on a shared machine change the memory bandwidth from one
    // second to the next, so the weight stream is compared with a read of the
    // same size made right after each call (read_B/s); bw_ratio_run compares
    // it with the baseline/memory_read of the start of the run instead.
    const double paired_read_rate = bytes / paired_read_seconds;
    state.counters["read_B/s"] = paired_read_rate;
    state.counters["bw_ratio"] = bytes / seconds / paired_read_rate;
    state.counters["bw_ratio_run"] = bytes / seconds / baselines_.read_bytes_per_second;
    state.counters["int8_ratio"] = macs / seconds / baselines_.int8_macs_per_second;
    state.counters["copies"] = static_cast<double>(weights.count());
    const double time_per_call = seconds / iterations;
    std::string key = plugin.string();
    for (const auto& [setting, value] : settings) key += "|" + setting + "=" + value;
    key += fmt::format("|{}|{}", shape.name, format.name);
    if (S == 1) {
      s1_time_[key] = time_per_call;
    } else if (auto found = s1_time_.find(key); found != s1_time_.end()) {
      state.counters["time_vs_s1"] = time_per_call / found->second;
    }
  }

 private:
  void ensure_read_buffer() {
    if (read_buffer_) return;
    read_buffer_ = std::make_unique<AlignedBlock>(kReadBufferBytes, 4096);
    std::memset(read_buffer_->data(), 1, kReadBufferBytes);  // fault every page in
  }

  /// Streams the next `bytes` of the read buffer (wrapping around), as the
  /// memory-read baseline does; returns the seconds it took.
  double timed_read(uint64_t bytes) {
    ensure_read_buffer();
    const uint64_t chunk = std::max<uint64_t>(bytes / 4096 * 4096, 4096ull * threads_);
    if (read_offset_ + chunk > kReadBufferBytes) read_offset_ = 0;
    const auto start = Clock::now();
    benchmark::DoNotOptimize(stream_read(read_buffer_->data() + read_offset_, chunk, threads_));
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    read_offset_ += chunk;
    return seconds * static_cast<double>(bytes) / static_cast<double>(chunk);
  }

  void measure_missing_baselines() {
    if (baselines_.read_bytes_per_second == 0) {
      ensure_read_buffer();
      stream_read(read_buffer_->data(), kReadBufferBytes, threads_);
      const auto start = Clock::now();
      uint64_t sum = 0;
      for (int k = 0; k < 5; ++k)
        sum += stream_read(read_buffer_->data(), kReadBufferBytes, threads_);
      benchmark::DoNotOptimize(sum);
      baselines_.read_bytes_per_second =
          5.0 * kReadBufferBytes / std::chrono::duration<double>(Clock::now() - start).count();
    }
    if (baselines_.int8_macs_per_second == 0) {
      const auto start = Clock::now();
      const int64_t macs = int8_dot_in_l1(threads_, 50000);
      baselines_.int8_macs_per_second =
          static_cast<double>(macs) / std::chrono::duration<double>(Clock::now() - start).count();
    }
  }

  int threads_;
  uint64_t working_set_bytes_;
  Baselines baselines_;
  std::unique_ptr<AlignedBlock> read_buffer_;
  uint64_t read_offset_ = 0;
  std::map<std::string, double> s1_time_;
};

std::vector<fs::path> plugins_to_measure() {
  std::vector<fs::path> plugins;
  if (const char* list = std::getenv("GLMRT_BENCH_PLUGINS")) {
    std::string_view rest = list;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      if (colon != 0) plugins.emplace_back(std::string(rest.substr(0, colon)));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
    return plugins;
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(GLMRT_PLUGIN_DIR, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("libglmrt-kernels-") && name.ends_with(".so"))
      plugins.push_back(entry.path());
  }
  std::sort(plugins.begin(), plugins.end());
  return plugins;
}

struct Options {
  int threads = 2;
  /// Weight copies per benchmark total at least this much (>> last-level
  /// cache: every S = 1 call streams from RAM). A small value measures the
  /// kernels on cached weights instead.
  uint64_t working_set_mb = 512;
  /// kernels-avx2's `activations` setting ("" = its default), e.g. int8x2.
  std::string activations;
  /// kernels-avx2's `vnni`, `avx512` and `pack` settings to compare (none =
  /// its default): each of its benchmarks registered once per combination of
  /// values, next to each other.
  std::vector<std::string> vnni, avx512, pack;
};

/// The values of a flag's comma-separated list.
std::vector<std::string> list_values(std::string_view list) {
  std::vector<std::string> values;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    values.emplace_back(list.substr(0, comma));
    list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
  }
  return values;
}

/// Takes --threads=N, --working_set_mb=N, --activations=MODE, --vnni=A,B, --avx512=A,B and
/// --pack=A,B out of argv
/// (Google Benchmark rejects flags it does not know); $GLMRT_BENCH_THREADS sets the default.
Options take_own_flags(int& argc, char** argv) {
  Options options;
  if (const char* env = std::getenv("GLMRT_BENCH_THREADS")) options.threads = std::atoi(env);
  int kept = 1;
  for (int k = 1; k < argc; ++k) {
    if (std::strncmp(argv[k], "--threads=", 10) == 0) {
      options.threads = std::atoi(argv[k] + 10);
    } else if (std::strncmp(argv[k], "--activations=", 14) == 0) {
      options.activations = argv[k] + 14;
    } else if (std::strncmp(argv[k], "--vnni=", 7) == 0) {
      options.vnni = list_values(argv[k] + 7);
    } else if (std::strncmp(argv[k], "--avx512=", 9) == 0) {
      options.avx512 = list_values(argv[k] + 9);
    } else if (std::strncmp(argv[k], "--pack=", 7) == 0) {
      options.pack = list_values(argv[k] + 7);
    } else if (std::strncmp(argv[k], "--working_set_mb=", 17) == 0) {
      options.working_set_mb = std::strtoull(argv[k] + 17, nullptr, 10);
    } else {
      argv[kept++] = argv[k];
    }
  }
  argc = kept;
  if (options.threads < 1) fail("--threads / GLMRT_BENCH_THREADS must be a positive integer");
  return options;
}

}  // namespace
}  // namespace glmrt::bench

int main(int argc, char** argv) {
  using namespace glmrt::bench;
  try {
    const Options options = take_own_flags(argc, argv);
    Bench bench(options.threads, options.working_set_mb << 20);  // outlives every run below
    benchmark::RegisterBenchmark("baseline/memory_read",
                                 [&bench](benchmark::State& s) { bench.memory_read(s); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("baseline/int8_dot_l1",
                                 [&bench](benchmark::State& s) { bench.int8_dot(s); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    for (const fs::path& plugin : plugins_to_measure()) {
      const glmrt::PluginInfo info = glmrt::PluginHost(std::vector<fs::path>{}).inspect(plugin);
      if (!info.supported) {
        fmt::print(stderr, "skipping {}: not supported on this CPU: {}\n", info.name, info.reason);
        continue;
      }
      const bool avx2 = info.name == "kernels-avx2";
      std::map<std::string, std::string> settings;
      if (!options.activations.empty() && avx2) settings["activations"] = options.activations;
      // "" = the plugin's default, named as before; a value names its run
      // "+vnni=VALUE" / "+avx512=VALUE" / "+pack=VALUE".
      const auto values = [&](const std::vector<std::string>& given) {
        return avx2 && !given.empty() ? given : std::vector<std::string>{""};
      };
      const std::vector<std::string> vnni_values = values(options.vnni);
      const std::vector<std::string> avx512_values = values(options.avx512);
      const std::vector<std::string> pack_values = values(options.pack);
      for (const Shape& shape : kShapes)
        for (const Format& format : kFormats)
          for (int64_t S : kBatchSizes)
            for (const std::string& vnni : vnni_values)
              for (const std::string& avx512 : avx512_values)
                for (const std::string& pack : pack_values) {
                  std::map<std::string, std::string> run_settings = settings;
                  std::string label;
                  for (const auto& [setting, value] :
                       {std::pair{"vnni", vnni}, {"avx512", avx512}, {"pack", pack}})
                    if (!value.empty()) {
                      run_settings[setting] = value;
                      label += fmt::format("+{}={}", setting, value);
                    }
                  const std::string name =
                      fmt::format("{}{}/{}/{}/S={}", info.name, label, shape.name, format.name, S);
                  benchmark::RegisterBenchmark(
                      name.c_str(),
                      [&bench, plugin, run_settings, shape, format, S](benchmark::State& s) {
                        bench.matmul(s, plugin, run_settings, shape, format, S);
                      })
                      ->UseManualTime()
                      ->Unit(benchmark::kMicrosecond);
                }
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    fmt::print(stderr, "kernels_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
