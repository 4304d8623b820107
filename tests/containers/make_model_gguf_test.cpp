// glmrt make-model --format gguf: the tiny presets as GGUF files in two type
// specs read back with llama.cpp's architecture, names, types and shapes,
// and run with finite logits (run, bench --evict); the same seed writes the same bytes; an
// unknown type, a row that is not whole blocks and an existing --out are
// refused, the file there untouched.
#include <glmrt/base/error.h>
#include <glmrt/engine/engine.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_maker/make_model.h>
#include <glmrt/plugin/ggml_types.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "checkpoint_generator.h"
#include "shell_command.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string gguf_file_bytes(const fs::path& file) {
  std::stringstream s;
  s << std::ifstream(file, std::ios::binary).rdbuf();
  return s.str();
}

MakeModelOptions gguf_options(const std::string& preset, const fs::path& out,
                              const std::string& types) {
  MakeModelOptions o;
  o.preset = preset;
  o.moe_layers = 2;
  o.out = out;
  o.seed = 7;
  o.hot_skew = 0.2;
  o.gguf = true;
  o.gguf_types = types;
  return o;
}

std::string type_of(const gguf::Model& m, const std::string& name) {
  return std::string(m.at(name).type_name());
}

// Greedy logits of a short prompt under `profile`: all finite, not all equal.
void expect_finite_logits(const fs::path& model, const char* profile) {
  Profile p = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / profile);
  p.plugin_paths.insert(p.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  auto engine = Engine::open(p, model);
  const std::vector<int32_t> tokens = {1, 200, 3, 400, 5, 600};
  KvCache cache = engine->new_cache();
  const auto logits = engine->model().logits(engine->model().forward(cache, tokens), 6);
  ASSERT_FALSE(logits.empty());
  float low = logits.front(), high = logits.front();
  for (float v : logits) {
    ASSERT_TRUE(std::isfinite(v)) << profile;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  EXPECT_GT(high - low, 0.1f) << profile;
}

TEST(MakeModelGguf, TinyQ4_0ExpertsQ8_0DenseReadsBackAndRuns) {
  test::ScratchDir scratch("glmrt-make-gguf");
  const fs::path out = scratch.path() / "tiny.gguf";
  const MakeModelResult r =
      make_model(gguf_options("tiny", out, "experts=q4_0,dense=Q8_0,kv_b=F16"));
  EXPECT_EQ(r.files, 1);
  EXPECT_EQ(r.bytes, fs::file_size(out));
  const gguf::Model m = gguf::Model::open(out);
  EXPECT_EQ(m.metadata().get<std::string_view>("general.architecture"), "glm-dsa");
  EXPECT_EQ(m.metadata().get<uint32_t>("glm-dsa.block_count"), 4u);  // dense, 2 MoE, MTP
  EXPECT_EQ(m.metadata().get<uint32_t>("glm-dsa.nextn_predict_layers"), 1u);
  EXPECT_EQ(type_of(m, "blk.1.ffn_gate_exps.weight"), "Q4_0");
  EXPECT_EQ(m.at("blk.1.ffn_gate_exps.weight").dims, (std::vector<int64_t>{64, 32, 16}));
  EXPECT_EQ(m.at("blk.2.ffn_down_exps.weight").dims, (std::vector<int64_t>{32, 64, 16}));
  EXPECT_EQ(type_of(m, "blk.0.attn_q_a.weight"), "Q8_0");
  EXPECT_EQ(type_of(m, "token_embd.weight"), "Q8_0");
  EXPECT_EQ(type_of(m, "output.weight"), "Q8_0");
  EXPECT_EQ(type_of(m, "blk.0.attn_k_b.weight"), "F16");
  EXPECT_EQ(m.at("blk.0.attn_k_b.weight").dims, (std::vector<int64_t>{16, 16, 4}));
  EXPECT_EQ(m.at("blk.0.attn_v_b.weight").dims, (std::vector<int64_t>{16, 16, 4}));
  for (const char* f32 :
       {"blk.1.ffn_gate_inp.weight", "blk.1.exp_probs_b.bias", "blk.0.attn_norm.weight",
        "blk.0.indexer.proj.weight", "blk.3.nextn.enorm.weight"})
    EXPECT_EQ(type_of(m, f32), "F32") << f32;
  EXPECT_EQ(type_of(m, "blk.3.nextn.eh_proj.weight"), "Q8_0");
  expect_finite_logits(out, "gguf.yaml");
  expect_finite_logits(out, "reference.yaml");

  const auto [status, text] = test::run_shell(fmt::format(
      "{}/glmrt run --profile {}/configs/gguf.yaml --model {} --prompt-ids 1,2,3 -n 4 2>&1",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, out.string()));
  EXPECT_EQ(status, 0) << text;
  // bench --evict drops the file itself from the page cache (a GGUF is no folder).
  const auto [bench_status, bench_text] = test::run_shell(fmt::format(
      "{}/glmrt bench --profile {}/configs/gguf.yaml --model {} --evict --reps 1 -n 2 2>&1",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, out.string()));
  EXPECT_EQ(bench_status, 0) << bench_text;
  EXPECT_THAT(bench_text, HasSubstr("configs/gguf.yaml"));
}

TEST(MakeModelGguf, Tiny256Iq2XxsExpertsReadBackAndRun) {
  test::ScratchDir scratch("glmrt-make-gguf");
  const fs::path out = scratch.path() / "tiny256.gguf";
  make_model(
      gguf_options("tiny-256", out, "experts=iq2_xxs,dense=q5_0,kv_b=bf16,embed=Q6_K,output=q4_k"));
  const gguf::Model m = gguf::Model::open(out);
  EXPECT_EQ(type_of(m, "blk.2.ffn_up_exps.weight"), "IQ2_XXS");
  EXPECT_EQ(m.at("blk.2.ffn_up_exps.weight").dims, (std::vector<int64_t>{256, 256, 16}));
  EXPECT_EQ(type_of(m, "blk.1.ffn_gate_shexp.weight"), "Q5_0");
  EXPECT_EQ(type_of(m, "blk.0.attn_v_b.weight"), "BF16");
  EXPECT_EQ(type_of(m, "token_embd.weight"), "Q6_K");
  EXPECT_EQ(type_of(m, "output.weight"), "Q4_K");
  expect_finite_logits(out, "gguf.yaml");
}

TEST(MakeModelGguf, SameSeedSameBytesAnotherSeedOthers) {
  test::ScratchDir scratch("glmrt-make-gguf");
  MakeModelOptions o =
      gguf_options("tiny", scratch.path() / "a.gguf", "experts=Q4_0,dense=Q8_0,kv_b=F16");
  make_model(o);
  o.out = scratch.path() / "b.gguf";
  make_model(o);
  o.out = scratch.path() / "c.gguf";
  o.seed = 8;
  make_model(o);
  const std::string a = gguf_file_bytes(scratch.path() / "a.gguf");
  EXPECT_EQ(a, gguf_file_bytes(scratch.path() / "b.gguf"));
  EXPECT_NE(a, gguf_file_bytes(scratch.path() / "c.gguf"));
}

TEST(MakeModelGguf, RefusesUnknownTypesPartialBlocksAndAnExistingOut) {
  test::ScratchDir scratch("glmrt-make-gguf");
  const fs::path out = scratch.path() / "mine.gguf";
  std::ofstream(out) << "mine";
  const auto run = [&](const std::string& args) {
    return test::run_shell(fmt::format("{}/glmrt make-model --preset tiny --moe-layers 1 {} 2>&1",
                                       GLMRT_BUILD_DIR, args));
  };
  auto [status, text] = run(fmt::format("--format gguf --gguf-types experts=Q4_Z --out {}/x.gguf",
                                        scratch.path().string()));
  EXPECT_EQ(status, 1);
  EXPECT_THAT(text, HasSubstr("unknown ggml type `Q4_Z`"));
  EXPECT_THAT(text, HasSubstr("IQ2_XXS"));
  std::tie(status, text) =
      run(fmt::format("--format gguf --gguf-types Q4_K --out {}/x.gguf", scratch.path().string()));
  EXPECT_EQ(status, 1);
  EXPECT_THAT(text, HasSubstr("tensor token_embd.weight has rows of 64 values, not a whole "
                              "number of Q4_K's 256-value blocks"));
  std::tie(status, text) =
      run(fmt::format("--format gguf --gguf-types Q8_0,kv_b=F16 --out {}", out.string()));
  EXPECT_EQ(status, 1);
  std::tie(status, text) =
      run(fmt::format("--format gguf --gguf-types experts=Q4_0,kv_b=F16 --out {}", out.string()));
  EXPECT_EQ(status, 1);
  EXPECT_THAT(text, HasSubstr("already exists (it is a regular file)"));
  EXPECT_EQ(gguf_file_bytes(out), "mine");
  EXPECT_FALSE(fs::exists(scratch.path() / "x.gguf"));
  std::tie(status, text) = run(
      fmt::format("--format gguf --gguf-types experts=Q4_0,dense=Q8_0,kv_b=F16 --out {}/ok.gguf",
                  scratch.path().string()));
  EXPECT_EQ(status, 0) << text;
  EXPECT_THAT(text, HasSubstr("ok.gguf: 1 file,"));
}

}  // namespace
}  // namespace glmrt
