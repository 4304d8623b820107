// Split GGUF models as llama.cpp's gguf-split writes them: found from any
// shard or their folder, tensors looked up across shards, metadata from the
// first; a missing or inconsistent shard is refused naming the file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/gguf_writer.h>
#include <glmrt/plugin/ggml_types.h>

#include "test_files.h"

namespace glmrt {
namespace {

using gguf::Value;
using test::expect_error;

struct ShardKeys {
  int no;
  int count;
  int total;
};

// Shard `keys.no` of a 3-shard model: 2 tensors each; the first holds the metadata.
void write_shard(const std::filesystem::path& file, ShardKeys keys,
                 std::string_view tensor_prefix = "blk") {
  gguf::Writer w;
  if (keys.no == 0) w.set("general.architecture", Value::str("deepseek2"));
  w.set("split.no", Value::u16(static_cast<uint16_t>(keys.no)));
  w.set("split.count", Value::u16(static_cast<uint16_t>(keys.count)));
  w.set("split.tensors.count", Value::i32(keys.total));
  for (int i = 0; i < 2; ++i) {
    const int layer = keys.no * 2 + i;
    w.add_tensor(fmt::format("{}.{}.weight", tensor_prefix, layer), GLMRT_GGML_F32, {4},
                 std::string(16, static_cast<char>(layer)));
  }
  w.write(file);
}

class SplitGguf : public ::testing::Test {
 protected:
  std::filesystem::path shard(int k) const {
    return tmp_.path() / gguf::split_file_name("GLM-5-UD-IQ2_M", k, 3);
  }
  void write_all() {
    for (int i = 0; i < 3; ++i) write_shard(shard(i + 1), {i, 3, 6});
  }
  test::TempFolder tmp_;
};

TEST_F(SplitGguf, FoundFromTheFirstShardAnyShardOrTheFolder) {
  write_all();
  for (const auto& from : {shard(1), shard(2), shard(3), tmp_.path()}) {
    const gguf::Model model = gguf::Model::open(from);
    ASSERT_EQ(model.files().size(), 3u) << from;
    EXPECT_EQ(model.files()[0], shard(1));
    EXPECT_EQ(model.files()[2], shard(3));
    EXPECT_EQ(model.metadata().get<std::string>("general.architecture"), "deepseek2");
    ASSERT_EQ(model.tensors().size(), 6u);
    const gguf::TensorInfo& t = model.at("blk.5.weight");
    EXPECT_EQ(t.file_index, 2);
    std::string bytes(16, '\0');
    model.read_raw(t, std::as_writable_bytes(std::span(bytes)));
    EXPECT_EQ(bytes, std::string(16, '\5'));
    EXPECT_EQ(model.at("blk.2.weight").file_index, 1);
  }
}

TEST_F(SplitGguf, MissingShard) {
  write_all();
  std::filesystem::remove(shard(2));
  expect_error(
      [&] { gguf::Model::open(shard(1)); },
      {shard(1).string(), "shard 2 of 3", "GLM-5-UD-IQ2_M-00002-of-00003.gguf", "missing"});
}

TEST_F(SplitGguf, WrongSplitNo) {
  write_all();
  write_shard(shard(3), {1, 3, 6});
  expect_error([&] { gguf::Model::open(shard(1)); },
               {shard(3).string(), "split.no is 1", "shard 3 of 3"});
}

TEST_F(SplitGguf, WrongSplitCount) {
  write_all();
  write_shard(shard(2), {1, 4, 6});
  expect_error([&] { gguf::Model::open(shard(1)); },
               {shard(2).string(), "split.count is 4", "3 shards"});
}

TEST_F(SplitGguf, WrongTotalTensorCount) {
  for (int i = 0; i < 3; ++i) write_shard(shard(i + 1), {i, 3, 7});
  expect_error([&] { gguf::Model::open(shard(1)); },
               {shard(1).string(), "split.tensors.count is 7", "hold 6 tensors"});
}

TEST_F(SplitGguf, MissingSplitKeys) {
  write_all();
  gguf::Writer bare;
  bare.add_tensor("blk.2.weight", GLMRT_GGML_F32, {4}, std::string(16, '\0'));
  bare.write(shard(2));
  expect_error([&] { gguf::Model::open(shard(1)); }, {shard(2).string(), "no split.count"});
}

TEST_F(SplitGguf, SameTensorInTwoShards) {
  write_all();
  write_shard(shard(3), {2, 3, 6});
  gguf::Writer w;
  w.set("split.no", Value::u16(1));
  w.set("split.count", Value::u16(3));
  w.set("split.tensors.count", Value::i32(6));
  w.add_tensor("blk.0.weight", GLMRT_GGML_F32, {4}, std::string(16, '\0'));
  w.add_tensor("blk.3.weight", GLMRT_GGML_F32, {4}, std::string(16, '\0'));
  w.write(shard(2));
  expect_error([&] { gguf::Model::open(shard(1)); },
               {"'blk.0.weight'", shard(1).string(), shard(2).string()});
}

TEST_F(SplitGguf, ShardKeysInAPlainlyNamedFile) {
  const auto file = tmp_.path() / "model.gguf";
  write_shard(file, {0, 3, 6});
  expect_error([&] { gguf::Model::open(file); },
               {file.string(), "split.count says the model has 3 shards", "NAME-00001-of-00003"});
}

TEST_F(SplitGguf, FolderWithTwoModels) {
  write_all();
  write_shard(tmp_.path() / "other.gguf", {0, 1, 2});
  expect_error(
      [&] { gguf::Model::open(tmp_.path()); },
      {tmp_.path().string(), "2 GGUF models", "other.gguf", "GLM-5-UD-IQ2_M-00001-of-00003.gguf"});
}

TEST_F(SplitGguf, EmptyFolder) {
  expect_error([&] { gguf::Model::open(tmp_.path()); }, {tmp_.path().string(), "no .gguf"});
}

TEST_F(SplitGguf, FolderWithOneFile) {
  write_shard(tmp_.path() / "solo.gguf", {0, 1, 2});
  const gguf::Model model = gguf::Model::open(tmp_.path());
  EXPECT_EQ(model.files().at(0), tmp_.path() / "solo.gguf");
  EXPECT_EQ(model.tensors().size(), 2u);
}

TEST(GgufSplitName, ParsesLlamaCppShardNames) {
  const auto split = gguf::parse_split_name("GLM-5-UD-Q2_K_XL-00002-of-00005.gguf");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->prefix, "GLM-5-UD-Q2_K_XL");
  EXPECT_EQ(split->number, 2);
  EXPECT_EQ(split->count, 5);
  EXPECT_EQ(gguf::split_file_name("x", 7, 33), "x-00007-of-00033.gguf");
  for (const char* name :
       {"model.gguf", "x-00006-of-00005.gguf", "x-00000-of-00005.gguf", "x-0001-of-00005.gguf",
        "-00001-of-00002.gguf", "x-00001-of-00002.bin", "x-0000a-of-00002.gguf"})
    EXPECT_FALSE(gguf::parse_split_name(name)) << name;
}

}  // namespace
}  // namespace glmrt
