// ABI 1.8: the engine marks the step's logits product (GLMRT_PRODUCT_LOGITS)
// and nothing else. With kernels-avx2's `activations: int8x2` and `logits:
// int8`, the logits are those of one int8 pass on the same hidden states, bit
// for bit, while every other product keeps both passes (the MTP head's draft
// logits take one too); `logits: same` keeps them. A tiny-256 GGUF whose
// lm_head is Q6_K.
#include <glmrt/engine/engine.h>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "temp_folder.h"
#include "tiny_gguf.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Engine> open_gguf(const fs::path& model, const std::string& activations,
                                  const std::string& logits) {
  Profile p = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "gguf.yaml");
  p.plugin_paths.insert(p.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  p.kernels.settings["activations"] = activations;
  p.kernels.settings["logits"] = logits;
  p.history = false;
  p.threads = 2;
  return Engine::open(p, model);
}

/// Hidden states of a 7-token prefill.
std::vector<float> prefill_hidden(Engine& engine) {
  KvCache cache = engine.new_cache();
  const std::vector<int32_t> tokens{11, 200, 35, 70, 100, 120, 129};
  return engine.model().forward(cache, tokens);
}

size_t bits_differ(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  size_t differ = 0;
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k)
    differ += std::bit_cast<uint32_t>(a[k]) != std::bit_cast<uint32_t>(b[k]);
  return differ;
}

TEST(LogitsHint, OnlyTheLogitsProductTakesOneInt8Pass) {
  test::TempFolder folder("glmrt-logits-hint");
  const fs::path model = test::make_tiny_gguf(folder.path() / "model.gguf", 2,
                                              "experts=Q4_K,dense=Q8_0,kv_b=F16,output=Q6_K");
  auto one_pass_logits = open_gguf(model, "int8x2", "int8");
  auto same = open_gguf(model, "int8x2", "same");
  auto int8 = open_gguf(model, "int8", "same");

  const std::vector<float> hidden = prefill_hidden(*one_pass_logits);
  // The hint reaches no other product: the hidden states are int8x2's.
  EXPECT_EQ(bits_differ(hidden, prefill_hidden(*same)), 0u);
  const int64_t rows = 7;
  const std::vector<float> hinted = one_pass_logits->model().logits(hidden, rows);
  // What one int8 pass gives on these hidden states, bit for bit...
  EXPECT_EQ(bits_differ(hinted, int8->model().logits(hidden, rows)), 0u);
  // ... which is not what two give: the engine did mark the product.
  const std::vector<float> two_passes = same->model().logits(hidden, rows);
  EXPECT_GT(bits_differ(hinted, two_passes), hinted.size() / 2);
  float worst = 0;
  for (size_t k = 0; k < hinted.size(); ++k)
    worst = std::max(worst, std::fabs(hinted[k] - two_passes[k]));
  EXPECT_LT(worst, 0.1f) << "one int8 pass moved a logit by " << worst;

  // The MTP head's draft logits are marked too (any hidden rows will do).
  ASSERT_TRUE(one_pass_logits->model().has_mtp());
  const std::vector<float> draft = one_pass_logits->model().mtp_logits(hidden, rows);
  EXPECT_EQ(bits_differ(draft, int8->model().mtp_logits(hidden, rows)), 0u);
  EXPECT_GT(bits_differ(draft, same->model().mtp_logits(hidden, rows)), draft.size() / 2);
}

TEST(LogitsHint, AnUnknownValueIsRefusedNamingTheSetting) {
  test::TempFolder folder("glmrt-logits-hint-setting");
  const fs::path model =
      test::make_tiny_gguf(folder.path() / "model.gguf", 1, "experts=Q4_K,dense=Q8_0,kv_b=F16");
  try {
    open_gguf(model, "int8x2", "int4");
    ADD_FAILURE() << "logits: int4 was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("logits"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("int8 or same"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace glmrt
