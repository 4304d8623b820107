// Opening real and hand-built safetensors files and reading their tensors.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include <glmrt/model_files/safetensors.h>
#include "test_files.h"

namespace glmrt {
namespace {

using test::bytes_of;
using test::expect_error;
using test::TempFolder;
using test::TensorSpec;

const std::filesystem::path kTiny = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";

TEST(TensorDirectoryTiny, OpensAllShardsAndEveryIndexedTensor) {
  const auto dir = TensorDirectory::open(kTiny);
  EXPECT_EQ(dir.files().size(), 3u);
  EXPECT_EQ(dir.tensors().size(), 294u);

  std::ifstream in(kTiny / "model.safetensors.index.json");
  const auto weight_map = nlohmann::json::parse(in).at("weight_map");
  EXPECT_EQ(weight_map.size(), dir.tensors().size());
  for (const auto& [name, shard] : weight_map.items()) {
    const TensorInfo& t = dir.at(name);
    EXPECT_EQ(dir.files().at(t.file_index).filename(), shard.get<std::string>()) << name;
  }
}

TEST(TensorDirectoryTiny, ShapesAndDtypes) {
  const auto dir = TensorDirectory::open(kTiny);
  const TensorInfo& embed = dir.at("model.embed_tokens.weight");
  EXPECT_EQ(embed.dtype, DType::F32);
  EXPECT_EQ(embed.shape, (std::vector<int64_t>{1024, 64}));
  EXPECT_EQ(embed.numel(), 1024 * 64);
  EXPECT_EQ(embed.byte_size, 1024u * 64u * 4u);
  EXPECT_EQ(dir.at("model.layers.0.mlp.down_proj.weight").shape, (std::vector<int64_t>{64, 96}));
  EXPECT_EQ(dir.at("model.layers.4.mlp.gate.e_score_correction_bias").shape,
            (std::vector<int64_t>{16}));
  EXPECT_TRUE(dir.contains("model.layers.4.eh_proj.weight"));
  EXPECT_FALSE(dir.contains("model.layers.5.eh_proj.weight"));
  EXPECT_EQ(dir.find("no.such.tensor"), nullptr);
}

TEST(TensorDirectoryTiny, ValuesMatchTheFileBytes) {
  const auto dir = TensorDirectory::open(kTiny);
  // First values as printed by Python's struct module from the shards.
  const auto embed = dir.read_f32(dir.at("model.embed_tokens.weight"));
  EXPECT_EQ(embed[0], 3.117753505706787f);
  EXPECT_EQ(embed[1], 0.37085333466529846f);
  EXPECT_EQ(embed[3], -0.8584286570549011f);
  const auto bias = dir.read_f32(dir.at("model.layers.4.mlp.gate.e_score_correction_bias"));
  EXPECT_EQ(bias[0], 0.03750527277588844f);
  EXPECT_EQ(bias[2], 0.08036752045154572f);

  for (const char* name : {"lm_head.weight", "model.layers.1.self_attn.kv_b_proj.weight",
                           "model.layers.4.self_attn.indexer.k_norm.bias"}) {
    const TensorInfo& t = dir.at(name);
    std::vector<std::byte> raw(t.byte_size);
    dir.read_raw(t, raw);
    // Independent read through iostreams at the recorded offset.
    std::ifstream file(dir.files()[t.file_index], std::ios::binary);
    file.seekg(static_cast<std::streamoff>(t.offset));
    std::vector<std::byte> expected(t.byte_size);
    file.read(reinterpret_cast<char*>(expected.data()), static_cast<std::streamsize>(t.byte_size));
    EXPECT_EQ(raw, expected) << name;
    std::vector<float> from_bytes(static_cast<size_t>(t.numel()));
    std::memcpy(from_bytes.data(), raw.data(), raw.size());
    EXPECT_EQ(dir.read_f32(t), from_bytes) << name;
  }
}

TEST(TensorDirectoryTiny, MissingTensorNamesItAndTheIndex) {
  const auto dir = TensorDirectory::open(kTiny);
  expect_error([&] { dir.at("model.layers.9.mlp.gate.weight"); },
               {"model.layers.9.mlp.gate.weight", "model.safetensors.index.json"});
}

TEST(TensorDirectoryTiny, WrongDestinationSizeIsRefused) {
  const auto dir = TensorDirectory::open(kTiny);
  const TensorInfo& t = dir.at("model.norm.weight");
  std::vector<float> too_small(static_cast<size_t>(t.numel()) - 1);
  expect_error([&] { dir.read_f32(t, too_small); }, {"model.norm.weight", "destination"});
  std::vector<std::byte> raw(t.byte_size + 1);
  expect_error([&] { dir.read_raw(t, raw); }, {"model.norm.weight", "destination"});
}

TEST(TensorDirectoryTiny, DescriptorsAreCloseOnExecAndClosedOnDestruction) {
  std::vector<int> fds;
  {
    auto dir = TensorDirectory::open(kTiny);
    for (int i = 0; i < 3; ++i) {
      fds.push_back(dir.fd(i));
      EXPECT_TRUE(::fcntl(dir.fd(i), F_GETFD) & FD_CLOEXEC);
      EXPECT_EQ(::fcntl(dir.fd(i), F_GETFL) & O_ACCMODE, O_RDONLY);
    }
    TensorDirectory moved(std::move(dir));
    EXPECT_EQ(moved.read_f32(moved.at("model.norm.weight")).size(), 64u);
    auto other = TensorDirectory::open(kTiny);
    other = std::move(moved);
    EXPECT_EQ(other.fd(0), fds[0]);
  }
  for (int fd : fds) EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "fd " << fd << " left open";
}

std::vector<TensorSpec> mixed_tensors() {
  return {
      {"f32", "F32", {2, 2}, bytes_of<float>({1.5f, -2.0f, 0.25f, 1e-3f})},
      {"bf16", "BF16", {3}, bytes_of<uint16_t>({0x3F80, 0xC000, 0x3EAB})},
      {"f16", "F16", {1, 3}, bytes_of<uint16_t>({0x3C00, 0xC000, 0x3555})},
      {"f64", "F64", {2}, bytes_of<double>({0.1, -3.0})},
      {"i32", "I32", {2}, bytes_of<int32_t>({7, -7})},
      {"scalar", "F32", {}, bytes_of<float>({42.0f})},
      {"empty", "F32", {0, 5}, ""},
  };
}

void expect_mixed_values(const TensorDirectory& dir) {
  EXPECT_EQ(dir.tensors().size(), 7u);
  EXPECT_EQ(dir.read_f32(dir.at("f32")), (std::vector<float>{1.5f, -2.0f, 0.25f, 1e-3f}));
  EXPECT_EQ(dir.read_f32(dir.at("bf16")), (std::vector<float>{1.0f, -2.0f, 0.333984375f}));
  EXPECT_EQ(dir.read_f32(dir.at("f16")), (std::vector<float>{1.0f, -2.0f, 0.333251953125f}));
  EXPECT_EQ(dir.read_f32(dir.at("f64")), (std::vector<float>{0.1f, -3.0f}));
  EXPECT_EQ(dir.read_f32(dir.at("scalar")), (std::vector<float>{42.0f}));
  EXPECT_EQ(dir.at("scalar").numel(), 1);
  EXPECT_TRUE(dir.read_f32(dir.at("empty")).empty());
  EXPECT_EQ(dir.at("i32").dtype, DType::I32);
  std::vector<std::byte> raw(8);
  dir.read_raw(dir.at("i32"), raw);
  int32_t second;
  std::memcpy(&second, raw.data() + 4, 4);
  EXPECT_EQ(second, -7);
}

TEST(TensorDirectorySingleFile, OpenFileReadsEveryDtype) {
  TempFolder tmp;
  const auto file = tmp.path() / "weights.safetensors";
  test::write_file(file, test::safetensors_file(mixed_tensors()));
  const auto dir = TensorDirectory::open_file(file);
  EXPECT_EQ(dir.files(), std::vector<std::filesystem::path>{file});
  expect_mixed_values(dir);
}

TEST(TensorDirectorySingleFile, DirectoryWithModelSafetensors) {
  TempFolder tmp;
  test::write_file(tmp.path() / "model.safetensors", test::safetensors_file(mixed_tensors()));
  test::write_file(tmp.path() / "other.safetensors", test::safetensors_file({}));
  expect_mixed_values(TensorDirectory::open(tmp.path()));
}

TEST(TensorDirectorySingleFile, DirectoryWithOneOtherSafetensorsFile) {
  TempFolder tmp;
  test::write_file(tmp.path() / "consolidated.safetensors",
                   test::safetensors_file(mixed_tensors()));
  expect_mixed_values(TensorDirectory::open(tmp.path()));
}

TEST(TensorDirectorySingleFile, IntegerTensorDoesNotConvertToF32) {
  TempFolder tmp;
  const auto file = tmp.path() / "weights.safetensors";
  test::write_file(file, test::safetensors_file(mixed_tensors()));
  const auto dir = TensorDirectory::open_file(file);
  expect_error([&] { dir.read_f32(dir.at("i32")); }, {"'i32'", "I32", file.string()});
}

TEST(TensorDirectorySingleFile, AmbiguousOrEmptyDirectoryIsRefused) {
  TempFolder tmp;
  expect_error([&] { TensorDirectory::open(tmp.path()); }, {tmp.path().string(), "no "});
  test::write_file(tmp.path() / "a.safetensors", test::safetensors_file({}));
  test::write_file(tmp.path() / "b.safetensors", test::safetensors_file({}));
  expect_error([&] { TensorDirectory::open(tmp.path()); },
               {"a.safetensors", "b.safetensors", "model.safetensors.index.json"});
  expect_error([&] { TensorDirectory::open(tmp.path() / "absent"); }, {"absent"});
}

}  // namespace
}  // namespace glmrt
