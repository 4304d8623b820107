// What `glmrt bench` prints: each profile's runs side by side (medians over
// the repetitions), as a table or as one JSON value.
#pragma once

#include "bench_run.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace glmrt::cli {

struct BenchSeries {
  std::filesystem::path profile;
  std::vector<BenchRun> runs;  // in the order they ran
};

struct BenchSetup {
  std::filesystem::path model;
  std::vector<int32_t> prompt;
  int new_tokens = 0;
  int reps = 0;
  bool evict = false;
  bool warmup = false;
  bool limits = false;  // the drive and DRAM limits measured before each run
  uint64_t memory_read_bytes = uint64_t{4} << 30;  // --limits-memory
  int ranks = 1;                                   // processes that ran (mpirun -n N)
  int parallel = 0;  // --parallel N: streams decoding together (0: one, the plain run)
  bool same_prompt = false;
};

void print_bench_table(std::FILE* out, const BenchSetup& setup,
                       const std::vector<BenchSeries>& series);
/// Exactly one JSON value (an object), then a newline.
void print_bench_json(std::FILE* out, const BenchSetup& setup,
                      const std::vector<BenchSeries>& series);

}  // namespace glmrt::cli
