// Every kind of broken safetensors file is refused with a message naming the
// file and, where one is involved, the tensor.
#include <gtest/gtest.h>

#include <glmrt/model_files/safetensors.h>
#include "test_files.h"

namespace glmrt {
namespace {

using test::bytes_of;
using test::expect_error;
using test::TempFolder;

class CorruptSafetensors : public ::testing::Test {
 protected:
  // Writes `bytes` as bad.safetensors and expects opening it to fail with a
  // message naming the file and every one of `needles`.
  void expect_refused(const std::string& bytes, std::vector<std::string> needles) {
    const auto file = tmp_.path() / "bad.safetensors";
    test::write_file(file, bytes);
    needles.push_back(file.string());
    expect_error([&] { TensorDirectory::open_file(file); }, needles);
  }

  // A header with one F32 tensor "w" of shape [2] described by `entry`.
  void expect_entry_refused(const std::string& entry, std::vector<std::string> needles) {
    needles.push_back("'w'");
    expect_refused(test::safetensors_bytes(R"({"w": )" + entry + "}", std::string(8, '\0')),
                   needles);
  }

  TempFolder tmp_;
};

TEST_F(CorruptSafetensors, ShorterThanTheLengthPrefix) {
  expect_refused("abc", {"8-byte"});
}

// Found by fuzz_safetensors: a number beyond double's range in the header
// escaped as the JSON library's out_of_range, not naming the file.
TEST_F(CorruptSafetensors, NumberOutOfRangeInTheHeader) {
  expect_refused(test::safetensors_bytes(R"({"__metadata__": {"x": 1e400}})", ""),
                 {"header is not valid JSON", "1e400"});
}

TEST_F(CorruptSafetensors, TruncatedByOneByteNamesTheCutTensor) {
  const std::string whole = test::safetensors_file({
      {"first", "F32", {2}, bytes_of<float>({1, 2})},
      {"last", "F32", {3}, bytes_of<float>({3, 4, 5})},
  });
  expect_refused(whole.substr(0, whole.size() - 1), {"'last'", "truncated"});
}

TEST_F(CorruptSafetensors, HeaderLengthBeyondTheFile) {
  std::string bytes = test::safetensors_bytes("{}", "");
  bytes[0] = 100;  // claims a 100-byte header in a 10-byte file
  expect_refused(bytes, {"header length 100", "past the end"});
}

TEST_F(CorruptSafetensors, AbsurdHeaderLength) {
  std::string bytes(16, '\0');
  bytes[7] = 0x10;  // 2^60
  expect_refused(bytes, {"header length", "limit"});
}

TEST_F(CorruptSafetensors, HeaderIsNotJson) {
  expect_refused(test::safetensors_bytes(R"({"w": {"dtype": "F32",)", ""), {"not valid JSON"});
}

TEST_F(CorruptSafetensors, HeaderIsNotAnObject) {
  expect_refused(test::safetensors_bytes("[1, 2]", ""), {"JSON object", "array"});
}

TEST_F(CorruptSafetensors, EntryIsNotAnObject) {
  expect_entry_refused("[1, 2]", {"entry"});
}

TEST_F(CorruptSafetensors, MetadataIsNotAnObject) {
  expect_refused(test::safetensors_bytes(R"({"__metadata__": 3})", ""), {"__metadata__"});
}

TEST_F(CorruptSafetensors, MissingFields) {
  expect_entry_refused(R"({"shape": [2], "data_offsets": [0, 8]})", {"'dtype'"});
  expect_entry_refused(R"({"dtype": "F32", "data_offsets": [0, 8]})", {"'shape'"});
  expect_entry_refused(R"({"dtype": "F32", "shape": [2]})", {"'data_offsets'"});
}

TEST_F(CorruptSafetensors, UnknownDtype) {
  expect_entry_refused(R"({"dtype": "F12", "shape": [2], "data_offsets": [0, 8]})",
                       {"unknown dtype 'F12'", "BF16"});
  expect_entry_refused(R"({"dtype": 32, "shape": [2], "data_offsets": [0, 8]})", {"dtype"});
}

TEST_F(CorruptSafetensors, BadShape) {
  expect_entry_refused(R"({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]})",
                       {"shape", "-2"});
  expect_entry_refused(R"({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]})",
                       {"shape", "2.5"});
  expect_entry_refused(R"({"dtype": "F32", "shape": ["2"], "data_offsets": [0, 8]})",
                       {"shape", "\"2\""});
  expect_entry_refused(R"({"dtype": "F32", "shape": 2, "data_offsets": [0, 8]})", {"shape"});
}

TEST_F(CorruptSafetensors, ShapeWhoseByteCountOverflows) {
  expect_entry_refused(
      R"({"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]})",
      {"overflows"});
}

TEST_F(CorruptSafetensors, BadOffsets) {
  expect_entry_refused(R"({"dtype": "F32", "shape": [2], "data_offsets": [8, 0]})",
                       {"begin 8 is after end 0"});
  expect_entry_refused(R"({"dtype": "F32", "shape": [2], "data_offsets": [-1, 8]})",
                       {"data_offsets"});
  expect_entry_refused(R"({"dtype": "F32", "shape": [2], "data_offsets": [0]})", {"data_offsets"});
}

TEST_F(CorruptSafetensors, SizeDisagreesWithShapeTimesDtype) {
  expect_entry_refused(R"({"dtype": "BF16", "shape": [2], "data_offsets": [0, 8]})",
                       {"spans 8 bytes", "needs 4 bytes", "BF16"});
}

TEST_F(CorruptSafetensors, OverlappingTensors) {
  expect_refused(test::safetensors_bytes(
                     R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                         "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                     std::string(12, '\0')),
                 {"'a'", "'b'", "overlap"});
}

TEST_F(CorruptSafetensors, DuplicateTensorName) {
  expect_refused(test::safetensors_bytes(
                     R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                     std::string(8, '\0')),
                 {"'a'", "twice"});
}

}  // namespace
}  // namespace glmrt
