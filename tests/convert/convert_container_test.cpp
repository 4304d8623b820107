// A whole conversion: glm_tiny at f32 validates oracle-exact; an interrupted
// conversion resumes (a damaged finished file is rewritten) to bytes
// identical to an uninterrupted one; OUT is never there before it is whole;
// verify accepts the result and rejects a truncated or altered shard;
// glm-demo converted to per-group formats runs within its quality bounds, and
// in the seed program's per-row form (int8 kv_b_proj included) streams
// through io-odirect within the streaming issue's bounds.
#include <glmrt/base/error.h>
#include <glmrt/convert/container_verify.h>
#include <glmrt/convert/convert.h>
#include <glmrt/engine/engine.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "convert_test_dir.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;

const fs::path kTiny = fs::path(GLMRT_FIXTURES) / "glm_tiny";
const fs::path kDemo = fs::path(GLMRT_SOURCE_DIR) / "models" / "glm-demo";

// The default formats (experts int4-g64, dense int8, ...).
ConvertOptions defaults(const fs::path& from, const fs::path& to) {
  ConvertOptions o;
  o.from = from;
  o.to = to;
  return o;
}

ConvertOptions all_f32(const fs::path& from, const fs::path& to) {
  ConvertOptions o = defaults(from, to);
  o.experts = o.dense = WeightBits::f32;
  o.embed = o.lm_head = WeightBits::f32;
  return o;
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Profile reference_profile() {
  Profile p = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
  p.plugin_paths.insert(p.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  return p;
}

TEST(ConvertContainer, F32ContainerOfGlmTinyValidatesOracleExact) {
  test::ConvertScratch dir("tiny-f32");
  const ConvertResult r = convert_checkpoint(all_f32(kTiny, dir / "out"));
  EXPECT_GT(r.files_written, 1);
  EXPECT_TRUE(fs::exists(dir / "out" / "tokenizer.json"));
  EXPECT_FALSE(fs::exists(dir / "out.partial"));
  verify_container(dir / "out");
  const Profile p = reference_profile();
  auto engine = Engine::open(p, dir / "out");
  const ValidationReport report =
      validate(*engine, load_oracle(kTiny / "ref.json"), p.validate, ValidateOptions{});
  EXPECT_TRUE(report.pass);
}

TEST(ConvertContainer, InterruptedConversionResumesByteIdentical) {
  test::ConvertScratch dir("resume");
  ConvertOptions o = defaults(kTiny, dir / "whole");
  o.max_shard_bytes = 64 << 10;  // several resident files
  convert_checkpoint(o);

  o.to = dir / "resumed";
  EXPECT_THROW(convert_checkpoint(o, 2), Error);
  EXPECT_FALSE(fs::exists(dir / "resumed"));
  ASSERT_TRUE(fs::exists(dir / "resumed.partial"));
  // A finished file damaged meanwhile is found by its checksum and rewritten.
  fs::path first;
  for (const auto& e : fs::directory_iterator(dir / "resumed.partial"))
    if (e.path().extension() == ".safetensors") first = e.path();
  ASSERT_FALSE(first.empty());
  {
    std::fstream f(first, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x5a');
  }
  const ConvertResult r = convert_checkpoint(o);
  EXPECT_EQ(r.files_reused, 1);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "whole"))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names.size(), static_cast<size_t>(std::distance(fs::directory_iterator(dir / "resumed"),
                                                            fs::directory_iterator())));
  for (const auto& name : names)
    EXPECT_EQ(file_bytes(dir / "whole" / name), file_bytes(dir / "resumed" / name)) << name;
}

// A source rewritten in place between the runs, with its size and time as
// they were, used to leave a stale file in a container verify called OK: the
// file made from the changed bytes is converted again, the others are kept.
TEST(ConvertContainer, ResumeConvertsAgainWhatARewrittenSourceChanged) {
  test::ConvertScratch dir("resume-rewritten");
  fs::create_directories(dir / "in");
  fs::copy(kTiny, dir / "in", fs::copy_options::recursive);
  ConvertOptions o = defaults(dir / "in", dir / "out");
  o.max_shard_bytes = 64 << 10;  // several resident files; embed_tokens leads the first
  EXPECT_THROW(convert_checkpoint(o, 2), Error);

  const std::string name = "model.embed_tokens.weight";
  fs::path shard;
  uint64_t offset = 0;
  {
    const TensorDirectory t = TensorDirectory::open(dir / "in");
    shard = t.files().at(t.at(name).file_index);
    offset = t.at(name).offset;
  }
  const auto time = fs::last_write_time(shard);
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offset));
    const float value = 0.25f;  // glm_tiny is F32
    f.write(reinterpret_cast<const char*>(&value), sizeof value);
  }
  fs::last_write_time(shard, time);

  const ConvertResult r = convert_checkpoint(o);
  EXPECT_EQ(r.files_reused, 1);
  EXPECT_NO_THROW(verify_container(dir / "out"));
  o.to = dir / "fresh";
  convert_checkpoint(o);
  for (const auto& e : fs::directory_iterator(dir / "fresh"))
    EXPECT_EQ(file_bytes(e.path()), file_bytes(dir / "out" / e.path().filename()))
        << e.path().filename();
}

// run/validate --verify (memory.verify_checksums): the files are checked
// against checksums.json before loading, the cost said on stderr, and a
// damaged file refused by name.
TEST(ConvertContainer, VerifyOnLoadChecksTheChecksums) {
  test::ConvertScratch dir("verify-on-load");
  convert_checkpoint(all_f32(kTiny, dir / "out"));
  Profile p = reference_profile();
  p.history = false;
  p.verify_checksums = true;
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(Engine::open(p, dir / "out"));
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("checksums of"), std::string::npos) << said;
  EXPECT_NE(said.find("GB/s"), std::string::npos) << said;

  fs::path shard;
  for (const auto& e : fs::directory_iterator(dir / "out"))
    if (e.path().extension() == ".safetensors") shard = e.path();
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-4, std::ios::end);
    f.put('\x01');
  }
  try {
    Engine::open(p, dir / "out");
    FAIL() << "a damaged container loaded with verify_checksums";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(shard.filename().string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
  }
  // A checkpoint has no checksums to check: asked for, that is an error.
  EXPECT_THROW(Engine::open(p, kTiny), Error);
}

TEST(ConvertContainer, StalePartialOfOtherOptionsNeedsForce) {
  test::ConvertScratch dir("stale");
  ConvertOptions o = defaults(kTiny, dir / "out");
  EXPECT_THROW(convert_checkpoint(o, 1), Error);
  ASSERT_TRUE(fs::exists(dir / "out.partial"));
  o.dense = WeightPrecision(WeightBits::int4, 32);
  try {
    convert_checkpoint(o);
    FAIL() << "a partial conversion of other options was taken over";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  o.force = true;
  convert_checkpoint(o);
  EXPECT_NO_THROW(verify_container(dir / "out"));
  EXPECT_FALSE(fs::exists(dir / "out.partial"));
}

TEST(ConvertContainer, DryRunWritesNothingAndCountsBits) {
  test::ConvertScratch dir("dry");
  ConvertOptions o = defaults(kTiny, dir / "out");
  o.dry_run = true;
  const ConvertResult r = convert_checkpoint(o);
  EXPECT_FALSE(fs::exists(dir / "out"));
  EXPECT_FALSE(fs::exists(dir / "out.partial"));
  const RoleTotals& experts = r.plan.totals.at(TensorRole::experts);
  // int4-g64: 4 bits + one f32 scale per 64 weights (glm_tiny's rows may be
  // shorter than a group: at most one scale per row more).
  EXPECT_GT(experts.bits_per_weight(), 4.4);
  EXPECT_LT(experts.bits_per_weight(), 5.5);
  EXPECT_NE(conversion_summary(r.plan).find("experts"), std::string::npos);
}

TEST(ConvertContainer, VerifyRejectsATruncatedOrAlteredShard) {
  test::ConvertScratch dir("verify");
  ConvertOptions o = defaults(kTiny, dir / "out");
  convert_checkpoint(o);
  EXPECT_NO_THROW(verify_container(dir / "out"));
  fs::path shard;
  for (const auto& e : fs::directory_iterator(dir / "out"))
    if (e.path().extension() == ".safetensors") shard = e.path();
  ASSERT_FALSE(shard.empty());
  const std::string bytes = file_bytes(shard);
  fs::resize_file(shard, bytes.size() - 100);
  try {
    verify_container(dir / "out");
    FAIL() << "a truncated shard passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(shard.filename().string()), std::string::npos);
  }
  {
    std::ofstream(shard, std::ios::binary | std::ios::trunc) << bytes;
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.put('\x01');
  }
  EXPECT_THROW(verify_container(dir / "out"), Error);
}

// The demo model's reference cases against its f32 oracle: experts int4-g64
// with int8 dense (the default conversion) holds the target KL <= 0.010.
TEST(ConvertContainer, DemoModelPerGroupContainerRunsWithinItsBounds) {
  test::ConvertScratch dir("demo");
  ConvertOptions o = defaults(kDemo, dir / "out");
  convert_checkpoint(o);
  Profile p = reference_profile();
  p.dense_bits = WeightBits::int8;
  p.expert_bits = WeightPrecision(WeightBits::int4, 64);
  ValidateThresholds th;
  th.min_top1 = 0.9;
  th.max_kl = 0.010;
  th.max_dlogit = 10;
  th.greedy_identical = false;
  auto engine = Engine::open(p, dir / "out");
  const ValidationReport report =
      validate(*engine, load_oracle(kDemo / "ref.json"), th, ValidateOptions{});
  for (const auto& c : report.cases) EXPECT_TRUE(c.pass) << c.name << " KL " << c.mean_kl;
}

// The seed program's container form (U8 + per-row `.qs`: int4 experts, int8
// dense, kv_b_proj int8 as the seed stores it) of the trained demo model,
// streamed as configs/nvme.yaml streams (io-odirect, read-ahead slots): every
// reference case within mean KL 0.05 and top-1 >= 0.85, the MTP rows included.
TEST(ConvertContainer, DemoModelInTheSeedFormStreamsWithinItsBounds) {
  test::ConvertScratch dir("demo-seed-form");
  ConvertOptions o = defaults(kDemo, dir / "out");
  o.experts = WeightBits::int4;
  o.dense = WeightBits::int8;
  o.kv_b = WeightBits::int8;
  convert_checkpoint(o);
  {
    const TensorDirectory files = TensorDirectory::open(dir / "out");
    ASSERT_TRUE(files.contains("model.layers.0.self_attn.kv_b_proj.weight.qs"));
    ASSERT_TRUE(files.contains("model.layers.1.mlp.experts.0.up_proj.weight.qs"));
    EXPECT_FALSE(files.contains("model.layers.1.mlp.experts.0.up_proj.weight.gqs"));
  }
  Profile p = reference_profile();
  p.kernels = PluginChoice{"auto", {}, {}};
  p.io = PluginChoice{"io-odirect", {}, {}};
  p.dense_bits = WeightBits::int8;
  p.expert_bits = WeightBits::int4;
  p.expert_cache_per_layer = 2;
  p.prefetch_slots = 2;
  p.pinned_bytes = 0;  // every expert through the slots
  p.history = false;
  ValidateThresholds th;
  th.min_top1 = 0.85;
  th.max_kl = 0.05;
  th.max_dlogit = 10;
  th.greedy_identical = false;
  auto engine = Engine::open(p, dir / "out");
  const ValidationReport report =
      validate(*engine, load_oracle(kDemo / "ref.json"), th, ValidateOptions{});
  ASSERT_FALSE(report.cases.empty());
  for (const auto& c : report.cases) EXPECT_TRUE(c.pass) << c.name << " KL " << c.mean_kl;
  EXPECT_GT(engine->experts().stats().misses, 0u);  // the experts streamed
}

}  // namespace
}  // namespace glmrt
