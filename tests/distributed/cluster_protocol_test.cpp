// The messages between ranks survive the trip (f32 exactly, bf16 rounded),
// and a short, long or inconsistent one is an error naming what was read.
#include <glmrt/distributed/cluster_protocol.h>
#include <glmrt/distributed/profile_keys.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace glmrt::cluster {
namespace {

Bytes step_bytes(Wire wire) {
  const std::vector<int32_t> counts{2, 1};
  const std::vector<RoutedExpert> choices{{1, 0.5f}, {3, 0.25f}, {2, 1.5f}};
  const std::vector<int32_t> predicted{0, 3};
  const std::vector<float> hidden{1.f, 2.f, 3.f, 1.0009765625f, -5.f, 6.f};  // 2 rows of 3
  return encode_step(7, 4, 5, wire, counts, choices, predicted, hidden);
}

TEST(ClusterProtocol, StepRoundTrips) {
  const Bytes bytes = step_bytes(Wire::f32);
  ByteReader in(bytes, "test step");
  ASSERT_EQ(read_op(in), Op::step);
  const Step s = decode_step(in, 3, 4);
  EXPECT_EQ(s.sequence, 7u);
  EXPECT_EQ(s.layer, 4);
  EXPECT_EQ(s.next_layer, 5);
  EXPECT_EQ(s.counts, (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(s.ids, (std::vector<int32_t>{1, 3, 2}));
  EXPECT_EQ(s.weights, (std::vector<float>{0.5f, 0.25f, 1.5f}));
  EXPECT_EQ(s.predicted, (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(s.rows, (std::vector<float>{1.f, 2.f, 3.f, 1.0009765625f, -5.f, 6.f}));
}

TEST(ClusterProtocol, Bf16HalvesTheRowsAndRounds) {
  const Bytes f32 = step_bytes(Wire::f32), bf16 = step_bytes(Wire::bf16);
  EXPECT_EQ(f32.size() - bf16.size(), 6u * 2);
  ByteReader in(bf16, "test step");
  read_op(in);
  const Step s = decode_step(in, 3, 4);
  EXPECT_EQ(s.wire, Wire::bf16);
  EXPECT_EQ(s.rows[3], 1.f);  // 1 + 2^-10 is below bf16's precision
  EXPECT_EQ(s.rows[4], -5.f);
}

TEST(ClusterProtocol, ABadStepIsRefused) {
  const Bytes bytes = step_bytes(Wire::f32);
  {
    ByteReader in(std::span<const std::byte>(bytes).first(bytes.size() - 1), "a short step");
    read_op(in);
    try {
      decode_step(in, 3, 4);
      FAIL() << "a short message was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("a short step"), std::string::npos) << e.what();
    }
  }
  {
    ByteReader in(bytes, "wrong width");
    read_op(in);
    EXPECT_THROW(decode_step(in, 4, 4), Error);  // 6 values are not rows of 4
  }
  {
    ByteReader in(bytes, "too few experts");
    read_op(in);
    EXPECT_THROW(decode_step(in, 3, 3), Error);  // expert 3 of 0..2
  }
  Bytes longer = bytes;
  longer.push_back(std::byte{0});
  ByteReader in(longer, "a long step");
  read_op(in);
  EXPECT_THROW(decode_step(in, 3, 4), Error);
}

TEST(ClusterProtocol, HelloAndSumsRoundTrip) {
  Hello hello{"",
              "0.1.0",
              "host-a",
              "/m",
              "abc",
              {{"memory.expert_cache", "16"}},
              {{"a.safetensors", 10, "00ff"}, {"b.safetensors", 20, ""}}};
  const Bytes bytes = encode(hello);
  ByteReader in(bytes, "hello");
  const Hello back = decode_hello(in);
  EXPECT_EQ(back.host, "host-a");
  EXPECT_EQ(back.profile_keys, hello.profile_keys);
  EXPECT_EQ(back.manifest, hello.manifest);
  const Bytes open = encode(Open{"/p.yaml", "/m", true});
  ByteReader open_in(open, "open");
  read_op(open_in);
  EXPECT_TRUE(decode_open(open_in).verify);
  const Sums sums{9, 0.5, "", {1.f, 2.f, 3.f}, {{1, {0, 3}}, {2, {1, 5}}}};
  const Bytes s = encode(sums, Wire::f32);
  ByteReader sin(s, "sums");
  const Sums sback = decode_sums(sin, 3, 8);
  EXPECT_EQ(sback.sequence, 9u);
  EXPECT_EQ(sback.busy_seconds, 0.5);
  EXPECT_EQ(sback.rows, sums.rows);
  EXPECT_EQ(sback.resident, sums.resident);
  // A resident expert the layer does not have is refused, naming the field.
  ByteReader small(s, "sums");
  try {
    decode_sums(small, 3, 4);
    ADD_FAILURE() << "expert 5 of 4 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resident expert 5"), std::string::npos) << e.what();
  }
}

TEST(ProfileKeys, TheFirstDifferingKeyIsNamed) {
  const auto dir = std::filesystem::temp_directory_path() / "glmrt-profile-keys-test";
  std::filesystem::create_directories(dir);
  auto write = [&](const char* name, const char* text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  const auto a = profile_keys(write("a.yaml", "model: /x\nmemory:\n  expert_cache: 16\n"));
  const auto b = profile_keys(write("b.yaml", "model: /y\nmemory:\n  expert_cache: 8\n"));
  const auto c = profile_keys(write("c.yaml", "model: /z\nmemory: {expert_cache: 16}\n"));
  const auto diff = first_difference(a, b);
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->key, "memory.expert_cache");
  EXPECT_EQ(diff->ours, "16");
  EXPECT_EQ(diff->theirs, "8");
  EXPECT_FALSE(first_difference(a, c)) << "`model` may differ per host; the form of YAML may too";
  std::filesystem::remove_all(dir);
}

// What rank 0 says of a rank whose copy's files differ: the file, and
// both sizes and checksums.
TEST(ModelManifest, TheFirstDifferingFileIsNamed) {
  const std::vector<ManifestEntry> ours = {{"a.safetensors", 10, "00ff"},
                                           {"b.safetensors", 20, "1234"}};
  EXPECT_EQ(manifest_difference(ours, ours), std::nullopt);
  auto theirs = ours;
  theirs[1].xxh3 = "9999";
  EXPECT_EQ(manifest_difference(ours, theirs),
            "`b.safetensors` is 20 bytes with XXH3 9999 there, 20 bytes with XXH3 1234 on rank 0");
  theirs.pop_back();
  EXPECT_NE(manifest_difference(ours, theirs)
                ->find("`b.safetensors` (20 bytes with XXH3 1234 on "
                       "rank 0) is not listed there"),
            std::string::npos);
  theirs = ours;
  theirs.push_back({"c.safetensors", 5, ""});
  EXPECT_NE(manifest_difference(ours, theirs)->find("`c.safetensors` (5 bytes there)"),
            std::string::npos);
}

}  // namespace
}  // namespace glmrt::cluster
