// glmrt under mpirun over loopback: validate on 2 and 3 ranks gives the
// figures of one process on every oracle case (to 1e-5) and reports every
// rank's experts; a rank whose model differs is refused, named, and so is
// one whose copy's weights differ (by its checksum list, or by `--verify`
// on every rank).
#include "shell_command.h"

#include <glmrt/model_files/container_checksums.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "temp_folder.h"

namespace glmrt {
namespace {

const std::string kGlmrt = GLMRT_EXECUTABLE;
const std::string kFixture = std::string(GLMRT_FIXTURES) + "/glm_tiny";
const std::string kProfile = std::string(GLMRT_SOURCE_DIR) + "/configs/reference.yaml";

// Ranks that wait on each other forever would hold the test (and CI) until
// ctest's limit: a run that takes two minutes is stopped and fails with 124.
const std::string kMpirun =
    fmt::format("timeout -k 10 120 {} {}", GLMRT_MPIRUN, GLMRT_MPIRUN_FLAGS);

std::string mpirun(int ranks) {
  return fmt::format("{} -n {}", kMpirun, ranks);
}

std::string validate_args(const std::string& model = kFixture) {
  return fmt::format("validate --profile {} --model {} --ref {}/ref.json --json", kProfile, model,
                     kFixture);
}

nlohmann::json run_json(const std::string& command) {
  const auto [status, out] = test::run_shell(command);
  EXPECT_EQ(status, 0) << command << "\n" << out;
  return nlohmann::json::parse(out);  // one JSON value and nothing else on stdout
}

void expect_same_figures(const nlohmann::json& one, const nlohmann::json& many) {
  ASSERT_EQ(one["cases"].size(), many["cases"].size());
  EXPECT_TRUE(many["pass"].get<bool>());
  for (size_t i = 0; i < one["cases"].size(); ++i) {
    const auto& a = one["cases"][i];
    const auto& b = many["cases"][i];
    for (const char* key : {"max_abs_dlogit", "mean_kl"})
      EXPECT_NEAR(a[key].get<double>(), b[key].get<double>(), 1e-5) << "case " << i << " " << key;
    for (const char* key :
         {"greedy_identical", "top1_agree", "rows_checked", "routing_rows_differ"})
      EXPECT_EQ(a[key], b[key]) << "case " << i << " " << key;
  }
}

void expect_ranks(const nlohmann::json& report, int ranks) {
  EXPECT_EQ(report["ranks"].get<int>(), ranks);
  ASSERT_EQ(report["rank_experts"].size(), static_cast<size_t>(ranks));
  int owned = 0;
  uint64_t lookups = 0;
  for (int r = 0; r < ranks; ++r) {
    const auto& e = report["rank_experts"][r];
    EXPECT_EQ(e["rank"].get<int>(), r);
    EXPECT_GT(e["experts_owned"].get<int>(), 0) << "rank " << r;
    EXPECT_GT(e["lookups"].get<uint64_t>(), 0u) << "rank " << r << " ran no expert";
    EXPECT_LE(e["misses"].get<uint64_t>(), e["lookups"].get<uint64_t>());
    owned += e["experts_owned"].get<int>();
    lookups += e["lookups"].get<uint64_t>();
  }
  EXPECT_GT(owned, 0);
  EXPECT_GT(lookups, 0u);
}

class MpiValidate : public ::testing::TestWithParam<int> {};

TEST_P(MpiValidate, FiguresAreThoseOfOneProcess) {
  const nlohmann::json one = run_json(fmt::format("{} {}", kGlmrt, validate_args()));
  EXPECT_EQ(one["ranks"].get<int>(), 1);
  ASSERT_EQ(one["rank_experts"].size(), 1u);
  const int ranks = GetParam();
  const nlohmann::json many =
      run_json(fmt::format("{} {} {}", mpirun(ranks), kGlmrt, validate_args()));
  expect_same_figures(one, many);
  expect_ranks(many, ranks);
  // Every expert is owned once: the shards add up to one process's experts.
  int owned = 0;
  for (const auto& e : many["rank_experts"]) owned += e["experts_owned"].get<int>();
  EXPECT_EQ(owned, one["rank_experts"][0]["experts_owned"].get<int>());
}

INSTANTIATE_TEST_SUITE_P(Ranks, MpiValidate, ::testing::Values(2, 3));

// A GGUF file with its experts kept as the file stores them (configs/gguf.yaml):
// the ranks read their experts' ggml blocks from the same file; with f32 on
// the wire the figures are one process's, and the automatic wire (bf16 for
// stored experts) still passes the profile's thresholds.
TEST(MpiGguf, StoredExpertsOnTwoRanksGiveTheFiguresOfOneProcess) {
  const std::string gguf = std::string(GLMRT_FIXTURES) + "/gguf";
  const std::string gguf_profile = std::string(GLMRT_SOURCE_DIR) + "/configs/gguf.yaml";
  const std::string f32_wire =
      (test::process_temp_folder() / "glmrt-mpi-gguf-f32-wire.yaml").string();
  {
    std::ifstream in(gguf_profile);
    std::ofstream out(f32_wire);
    out << in.rdbuf() << "distributed:\n  wire: f32\n";
  }
  const auto args = [&](const std::string& profile) {
    return fmt::format(
        "validate --profile {} --model {}/glm_dsa-Q4_K_M.gguf --ref "
        "{}/glm_dsa-ref-Q4_K_M.json --json",
        profile, gguf, gguf);
  };
  const nlohmann::json one = run_json(fmt::format("{} {}", kGlmrt, args(f32_wire)));
  const nlohmann::json many = run_json(fmt::format("{} {} {}", mpirun(2), kGlmrt, args(f32_wire)));
  expect_same_figures(one, many);
  expect_ranks(many, 2);
  const nlohmann::json bf16 =
      run_json(fmt::format("{} {} {}", mpirun(2), kGlmrt, args(gguf_profile)));
  EXPECT_TRUE(bf16["pass"].get<bool>());
  expect_ranks(bf16, 2);
}

// A sampled answer with int8 experts, as configs/demo.yaml runs them: the
// automatic wire carries f32 rows, so two ranks draw one process's tokens
// (with bf16 rows, the wire this profile had before, they parted within the
// first 40 tokens).
TEST(MpiRun, SampledTokensWithInt8ExpertsAreThoseOfOneProcess) {
  const std::string profile = (test::process_temp_folder() / "glmrt-mpi-sampled.yaml").string();
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered, draft: none}\n"
                            "precision: {dense: int8, experts: int8}\n"
                            "generation: {temperature: 0.8, top_p: 0.95, seed: 3}\n";
  const std::string args =
      fmt::format("run --profile {} --model {} --prompt-ids 5,6,7,8 -n 40 --ignore-eos 2>/dev/null",
                  profile, kFixture);
  const auto [one_status, one] = test::run_shell(kGlmrt + " " + args);
  const auto [two_status, two] = test::run_shell(mpirun(2) + " " + kGlmrt + " " + args);
  ASSERT_EQ(one_status, 0) << one;
  ASSERT_EQ(two_status, 0) << two;
  EXPECT_GT(std::count(one.begin(), one.end(), ','), 30) << one;
  EXPECT_EQ(one, two);
}

// distributed: rank 0 holding no experts, bf16 on the wire, shards by id:
// ranks 1 and 2 run every expert, the figures move by bf16 rounding only.
TEST(MpiDistributedKeys, RankZeroWithoutExpertsAndBf16OnTheWire) {
  const std::string profile = (test::process_temp_folder() / "glmrt-mpi-rank0-none.yaml").string();
  {
    std::ifstream in(kProfile);
    std::ofstream out(profile);
    out << in.rdbuf() << "distributed:\n  rank0_experts: false\n  wire: bf16\n  shard: id\n";
  }
  const std::string command =
      fmt::format("{} {} validate --profile {} --model {} --ref {}/ref.json --json", mpirun(3),
                  kGlmrt, profile, kFixture, kFixture);
  const auto [status, out] = test::run_shell(command);
  (void)status;  // bf16 rows may miss the f32 thresholds of reference.yaml
  const nlohmann::json report = nlohmann::json::parse(out);
  ASSERT_EQ(report["rank_experts"].size(), 3u);
  EXPECT_EQ(report["rank_experts"][0]["experts_owned"].get<int>(), 0);
  EXPECT_EQ(report["rank_experts"][0]["lookups"].get<uint64_t>(), 0u);
  EXPECT_EQ(report["rank_experts"][1]["experts_owned"].get<int>(),
            report["rank_experts"][2]["experts_owned"].get<int>());  // contiguous halves
  for (const auto& c : report["cases"]) {
    EXPECT_GE(c["top1_agree"].get<double>(), 0.9) << c["name"];
    EXPECT_LT(c["max_abs_dlogit"].get<double>(), 5.0) << c["name"];
    EXPECT_GT(c["max_abs_dlogit"].get<double>(), 1e-3) << "bf16 rows should move the logits";
  }
}

TEST(MpiRefusal, ARankWithAnotherModelIsNamed) {
  const std::string other = std::string(GLMRT_SOURCE_DIR) + "/models/glm-demo";
  const std::string command =
      fmt::format("{} {} -n 1 {} {} : -n 1 {} {} 2>&1", GLMRT_MPIRUN, GLMRT_MPIRUN_FLAGS, kGlmrt,
                  validate_args(), kGlmrt, validate_args(other));
  const auto [status, out] = test::run_shell(command);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("rank 1"), std::string::npos) << out;
  EXPECT_NE(out.find("different model"), std::string::npos) << out;
}

namespace fs = std::filesystem;

constexpr const char* kShards[] = {"model-00001-of-00003.safetensors",
                                   "model-00002-of-00003.safetensors",
                                   "model-00003-of-00003.safetensors"};

// A checksums.json describing `dir`'s shards as they are, as glmrt convert writes one.
void write_checksums(const fs::path& dir) {
  nlohmann::json files = nlohmann::json::object();
  for (const char* shard : kShards)
    files[shard] = {{"bytes", fs::file_size(dir / shard)},
                    {"xxh3", hash_hex(hash_file(dir / shard))}};
  std::ofstream(dir / kChecksumsFile) << nlohmann::json{{"hash", "xxh3-64"}, {"files", files}};
}

// glm_tiny as a container (with its checksum list) in a folder of its own.
fs::path container_copy(const std::string& name) {
  const fs::path dir = test::process_temp_folder() / ("glmrt-mpi-" + name);
  fs::remove_all(dir);
  fs::copy(kFixture, dir, fs::copy_options::recursive);
  write_checksums(dir);
  return dir;
}

// Overwrites tensor bytes at the end of the second shard: the weights
// differ, headers and sizes do not (the model id is the same).
void alter_weights(const fs::path& dir) {
  std::fstream file(dir / kShards[1], std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(-4096, std::ios::end);
  const std::string junk(2048, '\x11');
  file.write(junk.data(), static_cast<std::streamsize>(junk.size()));
}

// Rank 0 runs `ours`, rank 1 `theirs`; the status and what both printed.
std::pair<int, std::string> run_two(const fs::path& ours, const fs::path& theirs,
                                    const std::string& flags = "") {
  const auto run = [&](const fs::path& model) {
    return fmt::format("{} run --profile {} --model {} --prompt-ids 1,2,3 -n 2 {}", kGlmrt,
                       kProfile, model.string(), flags);
  };
  return test::run_shell(fmt::format("{} -n 1 {} : -n 1 {} 2>&1", kMpirun, run(ours), run(theirs)));
}

TEST(MpiRefusal, ARankWhoseCopyListsOtherChecksumsIsNamedWithTheFile) {
  const fs::path ours = container_copy("ours"), theirs = container_copy("converted-apart");
  alter_weights(theirs);
  write_checksums(theirs);  // its list describes its own weights
  // Rank 0's own copy passes --verify: what refuses is the comparison.
  const auto [status, out] = run_two(ours, theirs, "--verify");
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("verified: 3 files"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 1 (host "), std::string::npos) << out;
  EXPECT_NE(out.find("different copy of the model"), std::string::npos) << out;
  EXPECT_NE(out.find(kShards[1]), std::string::npos) << out;
  fs::remove_all(ours);
  fs::remove_all(theirs);
}

// A copy changed in place (its list unchanged) passes the comparison:
// `--verify` on rank 0 checks every rank's own files.
TEST(MpiRefusal, VerifyChecksEveryRanksOwnCopy) {
  const fs::path ours = container_copy("verified"), theirs = container_copy("damaged");
  alter_weights(theirs);
  const auto [status, out] = run_two(ours, theirs, "--verify");
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("rank 1 (host "), std::string::npos) << out;
  EXPECT_NE(out.find(kShards[1]), std::string::npos) << out;
  EXPECT_NE(out.find("the file is damaged"), std::string::npos) << out;
  fs::remove_all(ours);
  fs::remove_all(theirs);
}

}  // namespace
}  // namespace glmrt
