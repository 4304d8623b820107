// Every kind of broken or hostile GGUF file is refused with a message naming
// the file and, where one is involved, the key or tensor; counts and lengths
// past the end of the file are refused before anything is allocated for them.
#include <gtest/gtest.h>

#include <glmrt/model_files/gguf.h>
#include <glmrt/plugin/ggml_types.h>

#include "gguf_test_files.h"
#include "test_files.h"

namespace glmrt {
namespace {

using gguf::Array;
using gguf::Value;
using gguf::ValueType;
using test::expect_error;
using test::GgufParts;

class HostileGguf : public ::testing::Test {
 protected:
  void expect_refused(const std::string& bytes, std::vector<std::string> needles) {
    const auto file = tmp_.path() / "bad.gguf";
    test::write_file(file, bytes);
    needles.push_back(file.string());
    expect_error([&] { gguf::Model::open(file); }, needles);
  }
  // One F32 tensor "w" of 4 values with its data.
  static GgufParts one_tensor() {
    GgufParts p;
    p.pair("general.architecture", Value::str("glm-dsa"));
    p.tensor("w", {4}, GLMRT_GGML_F32, 0);
    p.data = std::string(16, '\1');
    return p;
  }
  test::TempFolder tmp_;
};

TEST_F(HostileGguf, ValidPartsAreAccepted) {
  // The baseline the other cases break one field of.
  const auto file = tmp_.path() / "good.gguf";
  test::write_file(file, one_tensor().bytes());
  EXPECT_EQ(gguf::Model::open(file).at("w").byte_size, 16u);
}

TEST_F(HostileGguf, BadMagic) {
  std::string bytes = one_tensor().bytes();
  bytes[0] = 'P', bytes[1] = 'K', bytes[2] = '\3', bytes[3] = '\4';
  expect_refused(bytes, {"not a GGUF file", "PK\\x03\\x04", "'GGUF'"});
}

TEST_F(HostileGguf, TooShort) {
  expect_refused("GGU", {"3 bytes long", "too short"});
}

TEST_F(HostileGguf, Version1) {
  GgufParts p = one_tensor();
  p.version = 1;
  expect_refused(p.bytes(), {"version 1", "convert", "versions 2 and 3"});
}

TEST_F(HostileGguf, Version4) {
  GgufParts p = one_tensor();
  p.version = 4;
  expect_refused(p.bytes(), {"version 4", "versions 2 and 3"});
}

TEST_F(HostileGguf, BigEndian) {
  GgufParts p = one_tensor();
  p.version = 0x03000000;  // 3 written big-endian
  expect_refused(p.bytes(), {"big-endian", "little-endian"});
}

TEST_F(HostileGguf, TensorCountPastTheFile) {
  GgufParts p = one_tensor();
  p.tensor_count = uint64_t{1} << 60;
  expect_refused(p.bytes(), {"claims 1152921504606846976 tensors", "bytes left"});
}

TEST_F(HostileGguf, KeyCountPastTheFile) {
  GgufParts p = one_tensor();
  p.pair_count = 1000;
  expect_refused(p.bytes(), {"claims 1000 metadata keys"});
}

TEST_F(HostileGguf, StringLengthHuge) {
  GgufParts p;
  gguf::append_string(p.pairs, "general.name");
  gguf::append_u32(p.pairs, static_cast<uint32_t>(ValueType::string));
  gguf::append_u64(p.pairs, uint64_t{1} << 62);
  p.pairs += "short";
  p.pair_count = 1;
  expect_refused(p.bytes(), {"'general.name'", "4611686018427387904 bytes long"});
}

TEST_F(HostileGguf, KeyLengthHuge) {
  GgufParts p;
  gguf::append_u64(p.pairs, uint64_t{1} << 40);
  p.pairs += std::string(64, 'k');
  p.pair_count = 1;
  expect_refused(p.bytes(), {"key of metadata pair #0", "1099511627776 bytes long", "65535"});
}

TEST_F(HostileGguf, ArrayCountHuge) {
  for (const ValueType element : {ValueType::uint8, ValueType::string, ValueType::array}) {
    GgufParts p;
    gguf::append_string(p.pairs, "tokenizer.ggml.tokens");
    gguf::append_u32(p.pairs, static_cast<uint32_t>(ValueType::array));
    gguf::append_u32(p.pairs, static_cast<uint32_t>(element));
    gguf::append_u64(p.pairs, uint64_t{1} << 50);
    p.pairs += std::string(100, '\0');
    p.pair_count = 1;
    expect_refused(p.bytes(), {"'tokenizer.ggml.tokens'", "claims 1125899906842624",
                               std::string(gguf::value_type_name(element))});
  }
}

// Arrays of arrays: depth 3 reads; deeper than the bound is refused (a
// recursion a file could otherwise drive off the stack).
TEST_F(HostileGguf, NestedArrays) {
  Array inner = Array::of<uint32_t>(ValueType::uint32, {1, 2, 3});
  for (int depth = 1; depth < 3; ++depth)
    inner = Array::of_arrays(inner.element_type(), {inner, inner});
  GgufParts p = one_tensor();
  p.pair("nested", Value::arr(inner));
  const auto file = tmp_.path() / "nested.gguf";
  test::write_file(file, p.bytes());
  const gguf::Model model = gguf::Model::open(file);
  EXPECT_EQ(model.metadata().get_array("nested").array(1).array(0).size(), 3u);

  GgufParts deep;
  gguf::append_string(deep.pairs, "deep");
  gguf::append_u32(deep.pairs, static_cast<uint32_t>(ValueType::array));
  for (int i = 0; i < 100000; ++i) {
    gguf::append_u32(deep.pairs, static_cast<uint32_t>(ValueType::array));
    gguf::append_u64(deep.pairs, 1);
  }
  deep.pair_count = 1;
  expect_refused(deep.bytes(), {"'deep'", "nests arrays more than 8 deep"});
}

TEST_F(HostileGguf, UnknownValueType) {
  GgufParts p;
  gguf::append_string(p.pairs, "odd");
  gguf::append_u32(p.pairs, 13);
  p.pairs += std::string(16, '\0');
  p.pair_count = 1;
  expect_refused(p.bytes(), {"'odd'", "value type 13"});
}

TEST_F(HostileGguf, BoolOtherThan0Or1) {
  GgufParts p;
  gguf::append_string(p.pairs, "flag");
  gguf::append_u32(p.pairs, static_cast<uint32_t>(ValueType::boolean));
  p.pairs += '\2';
  p.pair_count = 1;
  expect_refused(p.bytes(), {"'flag'", "byte 2", "0 or 1"});
}

TEST_F(HostileGguf, DuplicateKey) {
  GgufParts p = one_tensor();
  p.pair("general.architecture", Value::str("deepseek2"));
  expect_refused(p.bytes(), {"'general.architecture'", "twice"});
}

TEST_F(HostileGguf, BadAlignment) {
  for (const uint32_t alignment : {0u, 3u, 48u}) {
    GgufParts p = one_tensor();
    p.pair("general.alignment", Value::u32(alignment));
    expect_refused(p.bytes(),
                   {"general.alignment is " + std::to_string(alignment), "power of two"});
  }
  GgufParts p = one_tensor();
  p.pair("general.alignment", Value::str("32"));
  expect_refused(p.bytes(), {"'general.alignment' is string", "uint32"});
}

TEST_F(HostileGguf, OffsetMisaligned) {
  GgufParts p;
  p.tensor("w", {4}, GLMRT_GGML_F32, 8);
  p.data = std::string(64, '\0');
  expect_refused(p.bytes(), {"'w'", "data offset 8", "alignment 32"});
}

TEST_F(HostileGguf, OffsetPastTheEnd) {
  GgufParts p;
  p.tensor("w", {4}, GLMRT_GGML_F32, uint64_t{1} << 62);
  p.data = std::string(16, '\0');
  expect_refused(p.bytes(), {"'w'", "4611686018427387904", "holds 16 bytes"});
}

TEST_F(HostileGguf, OverlappingTensors) {
  GgufParts p;
  p.tensor("a", {16}, GLMRT_GGML_F32, 0);
  p.tensor("b", {4}, GLMRT_GGML_F32, 32);
  p.data = std::string(64, '\0');
  expect_refused(p.bytes(), {"'a'", "'b'", "overlap"});
}

TEST_F(HostileGguf, UnknownTensorType) {
  for (const uint32_t type : {4u, 99u, 0xffffffffu}) {
    GgufParts p;
    p.tensor("blk.0.ffn_up_exps.weight", {32}, type, 0);
    p.data = std::string(64, '\0');
    expect_refused(p.bytes(), {"'blk.0.ffn_up_exps.weight'", "type id " + std::to_string(type)});
  }
}

TEST_F(HostileGguf, RowsNotWholeBlocks) {
  GgufParts p;
  p.tensor("w", {100, 2}, GLMRT_GGML_Q4_K, 0);
  p.data = std::string(1024, '\0');
  expect_refused(p.bytes(), {"'w'", "Q4_K", "rows of 100 values", "256-value blocks"});
}

TEST_F(HostileGguf, DimensionCount) {
  for (const int n : {0, 5}) {
    GgufParts p;
    p.tensor("w", std::vector<int64_t>(n, 1), GLMRT_GGML_F32, 0);
    p.data = std::string(32, '\0');
    expect_refused(p.bytes(), {"'w'", std::to_string(n) + " dimensions", "1 to 4"});
  }
}

TEST_F(HostileGguf, NegativeDimension) {
  GgufParts p;
  p.tensor("w", {4, -1}, GLMRT_GGML_F32, 0);
  expect_refused(p.bytes(), {"'w'", "dimension 1 = -1"});
}

TEST_F(HostileGguf, ElementCountOverflow) {
  GgufParts p;
  p.tensor("w", {int64_t{1} << 32, int64_t{1} << 32}, GLMRT_GGML_F32, 0);
  expect_refused(p.bytes(), {"'w'", "overflows"});
  GgufParts bytes;  // numel fits, bytes do not
  bytes.tensor("w", {int64_t{1} << 31, int64_t{1} << 31}, GLMRT_GGML_F32, 0);
  expect_refused(bytes.bytes(), {"'w'", "byte size overflows"});
  // Found by fuzz_gguf: one row's byte count overflowed inside ggml_row_bytes.
  GgufParts row;
  row.tensor("w", {int64_t{1} << 62}, GLMRT_GGML_F32, 0);
  expect_refused(row.bytes(), {"'w'", "row of 4611686018427387904 values overflows"});
  // Found by fuzz_gguf: an empty row makes the element count 0, so it bounds nothing.
  GgufParts empty_rows;
  empty_rows.tensor("w", {0, int64_t{1} << 32, int64_t{1} << 32}, GLMRT_GGML_F32, 0);
  expect_refused(empty_rows.bytes(), {"'w'", "row count overflows"});
}

TEST_F(HostileGguf, TruncatedDataNamesTheTensor) {
  GgufParts p = one_tensor();
  p.tensor("last", {8}, GLMRT_GGML_F32, 32);
  p.data = std::string(64, '\0');
  const std::string whole = p.bytes();
  expect_refused(whole.substr(0, whole.size() - 1), {"'last'", "truncated"});
}

TEST_F(HostileGguf, TruncatedHeader) {
  const std::string whole = one_tensor().bytes();
  // Cut inside the tensor info (after the pairs): names what was being read.
  const size_t cut = whole.find('w') + 6;
  expect_refused(whole.substr(0, cut), {"'w'", "truncated"});
}

TEST_F(HostileGguf, DuplicateTensorName) {
  GgufParts p;
  p.tensor("w", {4}, GLMRT_GGML_F32, 0);
  p.tensor("w", {4}, GLMRT_GGML_F32, 32);
  p.data = std::string(64, '\0');
  expect_refused(p.bytes(), {"'w'", "twice"});
}

TEST_F(HostileGguf, TensorNameTooLong) {
  GgufParts p;
  p.tensor(std::string(64, 'n'), {4}, GLMRT_GGML_F32, 0);
  p.data = std::string(16, '\0');
  expect_refused(p.bytes(), {"name of tensor #0", "64 bytes long", "63"});
}

TEST_F(HostileGguf, ControlCharactersInNamesAreEscaped) {
  GgufParts p;
  p.tensor("w\x1b[2J", {4}, GLMRT_GGML_F32, 8);
  p.data = std::string(64, '\0');
  expect_refused(p.bytes(), {"'w\\x1b[2J'"});
}

}  // namespace
}  // namespace glmrt
