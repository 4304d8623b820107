// Sharded directories: model.safetensors.index.json must agree with its shards.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <glmrt/model_files/safetensors.h>
#include "test_files.h"

namespace glmrt {
namespace {

using test::bytes_of;
using test::expect_error;
using test::TempFolder;

class ShardedDirectory : public ::testing::Test {
 protected:
  ShardedDirectory() {
    test::write_file(tmp_.path() / "s1.safetensors",
                     test::safetensors_file({{"a", "F32", {1}, bytes_of<float>({1})}}));
    test::write_file(tmp_.path() / "s2.safetensors",
                     test::safetensors_file({{"b", "BF16", {2}, bytes_of<uint16_t>({0x4000, 0})}}));
  }

  std::filesystem::path index_file() const { return tmp_.path() / "model.safetensors.index.json"; }

  void write_index(const nlohmann::json& weight_map) {
    test::write_file(index_file(),
                     nlohmann::json{{"metadata", {}}, {"weight_map", weight_map}}.dump());
  }

  void expect_refused(std::vector<std::string> needles) {
    needles.push_back(index_file().string());
    expect_error([&] { TensorDirectory::open(tmp_.path()); }, needles);
  }

  TempFolder tmp_;
};

TEST_F(ShardedDirectory, ValidIndexOpensEveryShard) {
  write_index({{"a", "s1.safetensors"}, {"b", "s2.safetensors"}});
  const auto dir = TensorDirectory::open(tmp_.path());
  EXPECT_EQ(dir.files().size(), 2u);
  EXPECT_EQ(dir.read_f32(dir.at("b")), (std::vector<float>{2.0f, 0.0f}));
  EXPECT_EQ(dir.files()[dir.at("a").file_index].filename(), "s1.safetensors");
}

TEST_F(ShardedDirectory, MissingShard) {
  write_index({{"a", "s1.safetensors"}, {"b", "s3.safetensors"}});
  expect_refused({"s3.safetensors"});
}

TEST_F(ShardedDirectory, TensorAbsentFromItsShard) {
  write_index({{"a", "s1.safetensors"}, {"b", "s2.safetensors"}, {"c", "s2.safetensors"}});
  expect_refused({"'c'", "s2.safetensors", "no such tensor"});
}

TEST_F(ShardedDirectory, TensorMappedToTheWrongShard) {
  write_index({{"a", "s2.safetensors"}, {"b", "s2.safetensors"}, {"x", "s1.safetensors"}});
  expect_refused({"'a'", "s2.safetensors"});
}

TEST_F(ShardedDirectory, ShardNameEscapingTheDirectory) {
  write_index({{"a", "../s1.safetensors"}});
  expect_refused({"'a'", "../s1.safetensors", "inside the model directory"});
  write_index({{"a", "/etc/passwd"}});
  expect_refused({"'a'", "/etc/passwd"});
  write_index({{"a", 3}});
  expect_refused({"'a'"});
}

// Found by fuzz_model_dir: a number beyond double's range in the index
// escaped as the JSON library's out_of_range, not naming the file.
TEST_F(ShardedDirectory, NumberOutOfRangeInTheIndex) {
  test::write_file(index_file(), R"({"metadata": {"total_size": 1e400}, "weight_map": {}})");
  expect_refused({"not valid JSON", "1e400"});
}

TEST_F(ShardedDirectory, IndexWithoutWeightMap) {
  test::write_file(index_file(), R"({"metadata": {}})");
  expect_refused({"weight_map"});
  test::write_file(index_file(), "{not json");
  expect_refused({"not valid JSON"});
}

TEST_F(ShardedDirectory, TensorStoredInTwoShards) {
  test::write_file(tmp_.path() / "s3.safetensors",
                   test::safetensors_file({{"a", "F32", {1}, bytes_of<float>({5})}}));
  write_index({{"a", "s1.safetensors"}, {"b", "s2.safetensors"}, {"z", "s3.safetensors"}});
  expect_error([&] { TensorDirectory::open(tmp_.path()); },
               {"'a'", "twice", "s1.safetensors", "s3.safetensors"});
}

TEST_F(ShardedDirectory, CorruptShardIsNamed) {
  test::write_file(tmp_.path() / "s2.safetensors", "short");
  write_index({{"a", "s1.safetensors"}, {"b", "s2.safetensors"}});
  expect_error([&] { TensorDirectory::open(tmp_.path()); }, {"s2.safetensors", "8-byte"});
}

}  // namespace
}  // namespace glmrt
