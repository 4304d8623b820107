// ABI 1.7: resident weights packed for kernels-avx2 at load give the logits
// of the rows as the file stores them, bit for bit, in a prefill and in the
// one-token steps after it; `pack: off` packs nothing. A tiny-256 GGUF
// (widths of 256: whole q4_k super-blocks, whole groups of 8 q4_0 blocks).
#include <glmrt/engine/engine.h>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "temp_folder.h"
#include "tiny_gguf.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Engine> open_stored(const fs::path& model, const std::string& pack) {
  Profile p = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "gguf.yaml");
  p.plugin_paths.insert(p.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  p.kernels.settings["pack"] = pack;
  p.history = false;
  p.threads = 2;
  return Engine::open(p, model);
}

/// Logits of a 7-token prefill, then of 5 one-token steps (greedy).
std::vector<float> run_logits(Engine& engine) {
  Model& model = engine.model();
  KvCache cache = engine.new_cache();
  std::vector<int32_t> tokens{11, 200, 35, 70, 100, 120, 129};
  std::vector<float> all;
  for (int step = 0; step < 6; ++step) {
    const std::vector<float> hidden = model.forward(cache, tokens);
    const int64_t rows = static_cast<int64_t>(tokens.size());
    const std::vector<float> logits = model.logits(hidden, rows);
    all.insert(all.end(), logits.begin(), logits.end());
    const auto last = logits.end() - static_cast<int64_t>(logits.size()) / rows;
    tokens = {static_cast<int32_t>(std::max_element(last, logits.end()) - last)};
  }
  return all;
}

struct DenseTypes {
  const char* name;
  const char* gguf_types;
  int packed_at_least;
};

class PackedWeights : public testing::TestWithParam<DenseTypes> {};

TEST_P(PackedWeights, GiveTheLogitsOfTheStoredRowsBitForBit) {
  test::TempFolder folder("glmrt-packed-weights");
  const fs::path model =
      test::make_tiny_gguf(folder.path() / "model.gguf", 2, GetParam().gguf_types);
  auto packed = open_stored(model, "auto");
  if (packed->load_summary().matrices_packed == 0)
    GTEST_SKIP() << "kernels-avx2 packs no rows here (it needs AVX-VNNI)";
  auto stored = open_stored(model, "off");
  EXPECT_EQ(stored->load_summary().matrices_packed, 0);
  EXPECT_GE(packed->load_summary().matrices_packed, GetParam().packed_at_least);
  const std::vector<float> want = run_logits(*stored), got = run_logits(*packed);
  ASSERT_EQ(got.size(), want.size());
  size_t differ = 0, first = 0;
  for (size_t k = got.size(); k-- > 0;)
    if (std::bit_cast<uint32_t>(got[k]) != std::bit_cast<uint32_t>(want[k])) ++differ, first = k;
  EXPECT_EQ(differ, 0u) << "first at " << first << ": " << got[first] << " packed, " << want[first]
                        << " stored";
}

INSTANTIATE_TEST_SUITE_P(Types, PackedWeights,
                         testing::Values(
                             // Every matrix of 256 inputs or more: q_a, kv_a, gate and up of each
                             // of the 4 layers (MTP's too), the shared experts' down, eh_proj,
                             // lm_head (21).
                             DenseTypes{"Q4_0", "experts=Q4_K,dense=Q4_0,kv_b=F16", 20},
                             // tiny's narrower matrices (32 inputs) hold no whole super-block:
                             // lm_head alone in Q4_K.
                             DenseTypes{"Q4_K", "experts=Q4_K,dense=Q8_0,kv_b=F16,output=Q4_K", 1}),
                         [](const testing::TestParamInfo<DenseTypes>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace glmrt
