// Encode MB/s on the 21 paragraphs of tests/fixtures/tokenizer/*/expected.jsonl,
// with the per-word BPE cache warm (steady state of a server) and cold
// (cleared before every pass: the cost of words never seen before).
#include <benchmark/benchmark.h>
#include <glmrt/text/tokenizer.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using glmrt::text::Tokenizer;

struct Corpus {
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<std::string> paragraphs;
  std::size_t bytes = 0;
};

// Loaded once per tokenizer name and kept for the whole program run.
Corpus& corpus(const std::string& name) {
  static std::map<std::string, Corpus> loaded;
  auto [it, inserted] = loaded.try_emplace(name);
  if (inserted) {
    const std::string dir = std::string(GLMRT_FIXTURES) + "/tokenizer/" + name;
    it->second.tokenizer =
        std::make_unique<Tokenizer>(Tokenizer::from_file(dir + "/tokenizer.json"));
    std::ifstream in(dir + "/expected.jsonl");
    if (!in) throw std::runtime_error("cannot open " + dir + "/expected.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      const auto row = nlohmann::json::parse(line);
      if (row["kind"] != "paragraph") continue;
      it->second.paragraphs.push_back(row["text"]);
      it->second.bytes += it->second.paragraphs.back().size();
    }
  }
  return it->second;
}

void encode_paragraphs(benchmark::State& state, const std::string& name, bool warm) {
  Corpus& c = corpus(name);
  for (const auto& p : c.paragraphs) benchmark::DoNotOptimize(c.tokenizer->encode(p));
  for (auto _ : state) {
    if (!warm) {
      state.PauseTiming();
      c.tokenizer->clear_cache();
      state.ResumeTiming();
    }
    for (const auto& p : c.paragraphs) benchmark::DoNotOptimize(c.tokenizer->encode(p));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * c.bytes));
}

void BM_EncodeQwen3Warm(benchmark::State& s) {
  encode_paragraphs(s, "qwen3", true);
}
void BM_EncodeQwen3Cold(benchmark::State& s) {
  encode_paragraphs(s, "qwen3", false);
}
void BM_EncodeDeepSeekV3Warm(benchmark::State& s) {
  encode_paragraphs(s, "deepseek_v3", true);
}
void BM_EncodeDeepSeekV3Cold(benchmark::State& s) {
  encode_paragraphs(s, "deepseek_v3", false);
}

BENCHMARK(BM_EncodeQwen3Warm);
BENCHMARK(BM_EncodeQwen3Cold);
BENCHMARK(BM_EncodeDeepSeekV3Warm);
BENCHMARK(BM_EncodeDeepSeekV3Cold);

}  // namespace

BENCHMARK_MAIN();
