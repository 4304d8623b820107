// GGUF files the writer makes read back exactly: every metadata value type,
// tensor infos with their offsets and sizes, the alignment; the typed
// accessors name the file, the key and the types when a value does not fit.
#include <gtest/gtest.h>

#include <cstring>

#include <glmrt/base/error.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/gguf_writer.h>
#include <glmrt/plugin/ggml_types.h>

#include <cmath>
#include <limits>

#include "gguf_test_files.h"
#include "test_files.h"

namespace glmrt {
namespace {

using gguf::Array;
using gguf::Value;
using gguf::ValueType;
using test::expect_error;
using test::TempFolder;

std::string pattern_bytes(size_t n, int seed) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 31 + seed) & 0xff);
  return out;
}

gguf::Writer every_type_writer() {
  gguf::Writer w;
  w.set("general.architecture", Value::str("glm-dsa"));
  w.set("u8", Value::u8(200));
  w.set("i8", Value::i8(-100));
  w.set("u16", Value::u16(60000));
  w.set("i16", Value::i16(-30000));
  w.set("u32", Value::u32(4000000000u));
  w.set("i32", Value::i32(-2000000000));
  w.set("u64", Value::u64(uint64_t{1} << 40));
  w.set("i64", Value::i64(-(int64_t{1} << 40)));
  w.set("f32", Value::f32(0.1f));
  w.set("f64", Value::f64(1e-300));
  w.set("yes", Value::boolean(true));
  w.set("empty", Value::str(""));
  w.set("ints", Value::arr(Array::of<int32_t>(ValueType::int32, {1, -2, 3})));
  w.set("floats", Value::arr(Array::of<float>(ValueType::float32, {0.5f, -1.25f})));
  w.set("flags", Value::arr(Array::of<bool>(ValueType::boolean, {true, false, true})));
  w.set("u64s", Value::arr(Array::of<uint64_t>(ValueType::uint64, {7, uint64_t{1} << 63})));
  w.set("words", Value::arr(Array::of_strings({"a", "", "caf\xc3\xa9"})));
  w.set("nested", Value::arr(Array::of_arrays(ValueType::uint16,
                                              {Array::of<uint16_t>(ValueType::uint16, {1, 2}),
                                               Array::of<uint16_t>(ValueType::uint16, {})})));
  w.add_tensor("f32", GLMRT_GGML_F32, {4, 2}, pattern_bytes(32, 1));
  w.add_tensor("q4", GLMRT_GGML_Q4_0, {64, 3}, pattern_bytes(2 * 18 * 3, 2));
  w.add_tensor("experts", GLMRT_GGML_Q4_K, {256, 2, 3}, pattern_bytes(144 * 6, 3));
  w.add_tensor("empty", GLMRT_GGML_F16, {0, 5});
  return w;
}

TEST(GgufReader, RoundTripsEveryValueTypeAndTensor) {
  TempFolder tmp;
  const auto file = tmp.path() / "m.gguf";
  const gguf::Writer w = every_type_writer();
  w.write(file);
  const gguf::Model model = gguf::Model::open(file);
  const gguf::Metadata& m = model.metadata();
  EXPECT_EQ(m.get<std::string>("general.architecture"), "glm-dsa");
  EXPECT_EQ(m.get<uint8_t>("u8"), 200);
  EXPECT_EQ(m.get<int8_t>("i8"), -100);
  EXPECT_EQ(m.get<uint16_t>("u16"), 60000);
  EXPECT_EQ(m.get<int16_t>("i16"), -30000);
  EXPECT_EQ(m.get<uint32_t>("u32"), 4000000000u);
  EXPECT_EQ(m.get<int32_t>("i32"), -2000000000);
  EXPECT_EQ(m.get<uint64_t>("u64"), uint64_t{1} << 40);
  EXPECT_EQ(m.get<int64_t>("i64"), -(int64_t{1} << 40));
  EXPECT_EQ(m.get<float>("f32"), 0.1f);
  EXPECT_EQ(m.get<double>("f64"), 1e-300);
  EXPECT_TRUE(m.get<bool>("yes"));
  EXPECT_EQ(m.get<std::string_view>("empty"), "");
  // An integer is read as any integer type it fits.
  EXPECT_EQ(m.get<int64_t>("u8"), 200);
  EXPECT_EQ(m.get<uint64_t>("u32"), 4000000000u);
  EXPECT_EQ(m.get<std::vector<int32_t>>("ints"), (std::vector<int32_t>{1, -2, 3}));
  EXPECT_EQ(m.get<std::vector<int64_t>>("ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(m.get<std::vector<float>>("floats"), (std::vector<float>{0.5f, -1.25f}));
  EXPECT_EQ(m.get<std::vector<bool>>("flags"), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(m.get<std::vector<uint64_t>>("u64s"), (std::vector<uint64_t>{7, uint64_t{1} << 63}));
  EXPECT_EQ(m.get<std::vector<std::string>>("words"),
            (std::vector<std::string>{"a", "", "caf\xc3\xa9"}));
  const Array& nested = m.get_array("nested");
  ASSERT_EQ(nested.element_type(), ValueType::array);
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested.array(0).element_type(), ValueType::uint16);
  EXPECT_EQ(nested.array(0).size(), 2u);
  EXPECT_EQ(nested.array(1).size(), 0u);
  EXPECT_EQ(m.entries().front().first, "general.architecture");  // file order kept
  EXPECT_EQ(m.size(), 19u);

  ASSERT_EQ(model.tensors().size(), 4u);
  const gguf::FileHeader& header = model.header(0);
  EXPECT_EQ(header.version, 3u);
  EXPECT_EQ(header.alignment, 32u);
  EXPECT_EQ(header.data_offset % 32, 0u);
  const std::vector<uint64_t> offsets = w.offsets();
  for (size_t i = 0; i < w.tensors().size(); ++i) {
    const gguf::TensorInfo& t = model.at(w.tensors()[i].name);
    EXPECT_EQ(t.type, w.tensors()[i].type);
    EXPECT_EQ(t.dims, w.tensors()[i].dims);
    EXPECT_EQ(t.byte_size, w.tensors()[i].byte_size);
    EXPECT_EQ(t.offset, header.data_offset + offsets[i]);
    EXPECT_EQ(t.file_index, 0);
    std::string bytes(t.byte_size, '\0');
    model.read_raw(t, std::as_writable_bytes(std::span(bytes)));
    EXPECT_EQ(bytes, w.tensors()[i].data) << t.name;
  }
  const gguf::TensorInfo& experts = model.at("experts");
  EXPECT_EQ(experts.type_name(), "Q4_K");
  EXPECT_EQ(experts.numel(), 256 * 2 * 3);
  EXPECT_EQ(experts.byte_size, 144u * 6);
  EXPECT_EQ(model.at("empty").byte_size, 0u);
  EXPECT_EQ(model.find("absent"), nullptr);
  expect_error([&] { model.at("absent"); }, {"'absent'", file.string()});
}

TEST(GgufReader, ReadsVersion2) {
  TempFolder tmp;
  const auto file = tmp.path() / "v2.gguf";
  std::string bytes = every_type_writer().bytes();
  bytes[4] = 2;
  test::write_file(file, bytes);
  const gguf::Model model = gguf::Model::open(file);
  EXPECT_EQ(model.header(0).version, 2u);
  EXPECT_EQ(model.tensors().size(), 4u);
}

TEST(GgufReader, HonoursGeneralAlignment) {
  TempFolder tmp;
  const auto file = tmp.path() / "a.gguf";
  gguf::Writer w;
  w.set("general.alignment", Value::u32(256));
  w.add_tensor("a", GLMRT_GGML_F32, {3}, pattern_bytes(12, 1));
  w.add_tensor("b", GLMRT_GGML_Q8_0, {32}, pattern_bytes(34, 2));
  w.write(file);
  const gguf::Model model = gguf::Model::open(file);
  EXPECT_EQ(model.header(0).alignment, 256u);
  EXPECT_EQ(model.header(0).data_offset % 256, 0u);
  EXPECT_EQ(model.at("b").offset, model.header(0).data_offset + 256);
}

class GgufAccessors : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = tmp_.path() / "m.gguf";
    every_type_writer().write(file_);
    model_.emplace(gguf::Model::open(file_));
  }
  const gguf::Metadata& m() const { return model_->metadata(); }

  TempFolder tmp_;
  std::filesystem::path file_;
  std::optional<gguf::Model> model_;
};

TEST_F(GgufAccessors, WrongTypeNamesFileKeyAndBothTypes) {
  expect_error([&] { m().get<uint32_t>("general.architecture"); },
               {file_.string(), "'general.architecture'", "is string", "uint32"});
  expect_error([&] { m().get<std::string>("u32"); }, {"'u32'", "is uint32", "expected a string"});
  expect_error([&] { m().get<float>("u32"); }, {"'u32'", "float32 or float64"});
  expect_error([&] { m().get<bool>("u8"); }, {"'u8'", "expected a bool"});
  expect_error([&] { m().get<std::vector<int32_t>>("u8"); }, {"'u8'", "expected an array"});
  expect_error([&] { m().get<std::vector<std::string>>("ints"); },
               {"'ints'", "array of int32", "array of strings"});
  expect_error([&] { m().get_array("u8"); }, {"'u8'", "expected an array"});
}

TEST_F(GgufAccessors, ValueOutOfRangeIsRefusedNotWrapped) {
  expect_error([&] { m().get<uint32_t>("u64"); }, {"'u64'", "1099511627776", "fits uint32"});
  expect_error([&] { m().get<uint16_t>("i8"); }, {"'i8'", "int8 -100", "fits uint16"});
  expect_error([&] { m().get<std::vector<uint32_t>>("ints"); },
               {"'ints'", "element 1", "int32 -2", "fits uint32"});
  expect_error([&] { m().get<std::vector<int64_t>>("u64s"); },
               {"'u64s'", "element 1", "9223372036854775808"});
}

TEST_F(GgufAccessors, MissingKeysAndDefaults) {
  expect_error([&] { m().get<uint32_t>("glm-dsa.block_count"); },
               {file_.string(), "has no metadata key 'glm-dsa.block_count'"});
  EXPECT_EQ(m().get_or<uint32_t>("glm-dsa.block_count", 7), 7u);
  EXPECT_EQ(m().find_as<uint32_t>("glm-dsa.block_count"), std::nullopt);
  EXPECT_EQ(m().find_as<uint32_t>("u16"), 60000u);
  // A present key of the wrong type is an error, not the default.
  expect_error([&] { m().get_or<uint32_t>("general.architecture", 7); }, {"is string"});
}

TEST(GgufWriter, RefusesWhatTheReaderWouldRefuse) {
  gguf::Writer w;
  expect_error([&] { w.add_tensor("q", GLMRT_GGML_Q4_K, {100}); }, {"'q'", "Q4_K", "256"});
  expect_error([&] { w.add_tensor("x", GLMRT_GGML_F32, {1, 1, 1, 1, 1}); }, {"'x'", "5 dim"});
  expect_error([&] { w.add_tensor("x", 4, {32}); }, {"'x'", "type id 4"});
  expect_error([&] { w.add_tensor(std::string(64, 'n'), GLMRT_GGML_F32, {1}); }, {"63 bytes"});
  expect_error([&] { w.add_tensor("x", GLMRT_GGML_F32, {2}, "abc"); }, {"3 bytes", "take 8"});
  w.set("k", Value::u8(1));
  expect_error([&] { w.set("k", Value::u8(2)); }, {"'k'", "twice"});
}

TEST(GgufWriter, FailedWriteLeavesTheOldFileAndNoTemporary) {
  TempFolder tmp;
  const auto file = tmp.path() / "keep.gguf";
  test::write_file(file, "the user's file");
  gguf::Writer w;
  w.add_tensor("a", GLMRT_GGML_F32, {4});
  EXPECT_THROW(
      w.write(file, [](size_t, int64_t, std::span<std::byte>) { throw Error("disk full"); }),
      Error);
  EXPECT_EQ(test::read_file(file), "the user's file");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(tmp.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(GgufWriter, FillsTensorsFromTheCallback) {
  TempFolder tmp;
  const auto file = tmp.path() / "filled.gguf";
  gguf::Writer w;
  w.add_tensor("a", GLMRT_GGML_F32, {3});
  w.add_tensor("b", GLMRT_GGML_BF16, {5});
  w.write(file, [](size_t index, int64_t first_row, std::span<std::byte> out) {
    EXPECT_EQ(first_row, 0);
    for (size_t i = 0; i < out.size(); ++i) out[i] = std::byte(index * 16 + i);
  });
  const gguf::Model model = gguf::Model::open(file);
  std::vector<std::byte> bytes(10);
  model.read_raw(model.at("b"), bytes);
  EXPECT_EQ(bytes[3], std::byte(19));
}

// A tensor larger than a piece (~64 MB) is asked for in pieces of whole rows,
// in order, written while the next is filled; a fill that fails midway
// leaves the user's file and no temporary.
TEST(GgufWriter, LargeTensorsAreFilledInPiecesOfWholeRows) {
  TempFolder tmp;
  const auto file = tmp.path() / "big.gguf";
  constexpr int64_t kCols = 4096, kRows = 4200;  // 68.8 MB of F32
  gguf::Writer w;
  w.add_tensor("small", GLMRT_GGML_F32, {8});
  w.add_tensor("big", GLMRT_GGML_F32, {kCols, kRows});
  std::vector<std::pair<int64_t, int64_t>> asked;  // (first row, rows) of "big"
  w.write(file, [&](size_t index, int64_t first_row, std::span<std::byte> out) {
    const auto rows = static_cast<int64_t>(out.size() / (index == 0 ? 32 : kCols * 4));
    if (index == 1) asked.push_back({first_row, rows});
    auto* values = reinterpret_cast<float*>(out.data());
    for (int64_t r = 0; r < rows; ++r) values[r * (index == 0 ? 8 : kCols)] = float(first_row + r);
  });
  ASSERT_GE(asked.size(), 2u);
  int64_t next = 0;
  for (const auto& [first, rows] : asked) {
    EXPECT_EQ(first, next);
    next += rows;
  }
  EXPECT_EQ(next, kRows);
  const gguf::Model model = gguf::Model::open(file);
  std::vector<std::byte> big(static_cast<size_t>(kCols * kRows * 4));
  model.read_raw(model.at("big"), big);
  for (int64_t r : {int64_t{0}, asked[1].first - 1, asked[1].first, kRows - 1}) {
    float first_value;
    std::memcpy(&first_value, big.data() + r * kCols * 4, 4);
    EXPECT_EQ(first_value, float(r)) << "row " << r;
  }
  // The fill fails in the second piece, while the first may be on its way to disk.
  test::write_file(file, "the user's file");
  EXPECT_THROW(w.write(file,
                       [&](size_t index, int64_t first_row, std::span<std::byte>) {
                         if (index == 1 && first_row > 0) throw Error("no more entropy");
                       }),
               Error);
  EXPECT_EQ(test::read_file(file), "the user's file");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(tmp.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

}  // namespace
}  // namespace glmrt
