// Bad containers are refused with errors naming the file, the tensor and what
// was expected: format stamps that contradict the bytes or the dtype, stamps
// that are not what the format says, packed data whose byte count fits no format.
#include <glmrt/base/error.h>
#include <glmrt/weights/stored_matrix.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "checkpoint_generator.h"
#include "container_twin.h"
#include "safetensors_writer.h"
#include "variant_harness.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test::HostTensor;
using test::StoredDType;

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_error(const std::function<void()>& action, std::vector<std::string> needles) {
  const std::string message = error_of(action);
  for (const auto& n : needles) EXPECT_NE(message.find(n), std::string::npos) << message;
}

// One file: a 4x8 matrix `w` packed as int8 (32 bytes) with its scales, and
// whatever stamp `stamps` says (a JSON object's text, or any string).
fs::path write_packed(const fs::path& dir, const std::string& stamps, uint32_t type = 2) {
  HostTensor w{"w", {4, 8}, std::vector<float>(32, 0.5f), StoredDType::f32};
  auto [packed, scales] = test::quantize_rows(w, type);
  test::FileLayout layout;
  layout.metadata["quant_formats"] = stamps;
  const fs::path file = dir / "model.safetensors";
  test::write_safetensors_file(file, {packed, scales}, layout);
  return file;
}

TEST(FormatStamp, IsReadAndTrusted) {
  test::ScratchDir dir("glmrt-stamp");
  // 16 bytes for 4x8: int4 by its stamp (by byte count alone it is int4 too).
  write_packed(dir.path(), R"({"w": "int4", "w.qs": "f32"})", 3);
  const TensorDirectory files = TensorDirectory::open(dir.path());
  EXPECT_EQ(files.at("w").stamp, StampedFormat::int4);
  EXPECT_EQ(files.at("w.qs").stamp, StampedFormat::f32);
  const StoredMatrix m = find_stored_matrix(files, "w", 4, 8);
  EXPECT_EQ(m.packed_type, 3u);
  // The same bytes as a 4x16 matrix would be int2 by count; the stamp says int4.
  expect_error([&] { find_stored_matrix(files, "w", 4, 16); },
               {"tensor w in", "stamped int4", "4x16", "32 bytes", "holds 16 bytes"});
}

TEST(FormatStamp, MismatchWithTheByteCountNamesTheTensor) {
  test::ScratchDir dir("glmrt-stamp");
  write_packed(dir.path(), R"({"w": "int4"})");  // 32 bytes: int8 for 4x8
  const TensorDirectory files = TensorDirectory::open(dir.path());
  expect_error(
      [&] { find_stored_matrix(files, "w", 4, 8); },
      {"tensor w in", "model.safetensors", "stamped int4", "takes 16 bytes", "holds 32 bytes"});
}

TEST(FormatStamp, MalformedStampsAreRefusedWhenTheFileOpens) {
  test::ScratchDir dir("glmrt-stamp");
  const auto opening = [&](const std::string& stamps) {
    fs::remove_all(dir.path() / "model.safetensors");
    write_packed(dir.path(), stamps);
    return error_of([&] { TensorDirectory::open(dir.path()); });
  };
  EXPECT_NE(opening("not json").find("quant_formats is not valid JSON"), std::string::npos);
  EXPECT_NE(opening("[1]").find("must hold a JSON object"), std::string::npos);
  std::string e = opening(R"({"w": "int5"})");
  EXPECT_NE(e.find("stamps tensor 'w' with \"int5\""), std::string::npos) << e;
  e = opening(R"({"w": "int3-k16"})");
  EXPECT_NE(e.find("stamps tensor 'w' with \"int3-k16\""), std::string::npos) << e;
  e = opening(R"({"absent": "int8"})");
  EXPECT_NE(e.find("stamps tensor 'absent' as int8, but this file holds no such tensor"),
            std::string::npos)
      << e;
  e = opening(R"({"w": "f32"})");
  EXPECT_NE(e.find("tensor 'w' is stamped f32 but stored as U8"), std::string::npos) << e;
  e = opening(R"({"w.qs": "int8"})");
  EXPECT_NE(e.find("tensor 'w.qs' is stamped int8 but stored as F32"), std::string::npos) << e;
}

TEST(FormatStamp, StampThatIsNotAStringIsRefused) {
  test::ScratchDir dir("glmrt-stamp");
  const std::string header =
      R"({"__metadata__":{"quant_formats":{"w":"int8"}},"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  bytes += header + std::string(2, '\0');
  std::ofstream(dir.path() / "model.safetensors", std::ios::binary) << bytes;
  expect_error([&] { TensorDirectory::open(dir.path()); },
               {"__metadata__.quant_formats must be a string holding a JSON object", "object"});
}

TEST(StoredMatrix, PackedDataWhoseSizeFitsNoFormatIsRefused) {
  test::ScratchDir dir("glmrt-stamp");
  HostTensor packed{"w", {7}, std::vector<float>(7, 1.f), StoredDType::u8};
  HostTensor scales{"w.qs", {4}, std::vector<float>(4, 1.f), StoredDType::f32};
  test::write_safetensors_file(dir.path() / "model.safetensors", {packed, scales});
  const TensorDirectory files = TensorDirectory::open(dir.path());
  expect_error([&] { find_stored_matrix(files, "w", 4, 8); },
               {"tensor w in", "7 bytes fit no packed format of a 4x8 matrix", "int8 takes 32",
                "int4 16", "int2 8"});
  // 7 bytes are int8 for 7x1, but the scales are for 4 rows.
  expect_error([&] { find_stored_matrix(files, "w", 7, 1); },
               {"tensor w.qs", "expected F32 per-row scales of shape [7], found F32 [4]"});
}

TEST(StoredMatrix, StampedPackedTensorWithoutScalesIsRefused) {
  test::ScratchDir dir("glmrt-stamp");
  HostTensor packed{"w", {32}, std::vector<float>(32, 1.f), StoredDType::u8};
  test::FileLayout layout;
  layout.metadata["quant_formats"] = R"({"w": "int8"})";
  test::write_safetensors_file(dir.path() / "model.safetensors", {packed}, layout);
  const TensorDirectory files = TensorDirectory::open(dir.path());
  expect_error([&] { find_stored_matrix(files, "w", 4, 8); },
               {"tensor w in", "stamped int8 but its scales (w.qs or w.gqs) are missing"});
}

// A stamp contradicting the bytes stops the model from opening, naming the
// tensor: a resident matrix, and a routed expert's.
TEST(FormatStamp, ContainerWhoseStampContradictsItsBytesDoesNotOpen) {
  const nlohmann::json config = test::base_variant_config();
  const test::TensorList tensors = test::make_checkpoint_tensors({config, 3});
  for (const std::string tensor : {"model.layers.1.self_attn.q_a_proj.weight",
                                   "model.layers.3.mlp.experts.5.up_proj.weight"}) {
    test::ScratchDir dir("glmrt-stamp");
    test::ContainerSpec spec;
    spec.layout = test::ContainerLayout::aligned_experts;
    test::write_container(dir.path(), config, tensors, spec);
    // Re-stamp one tensor in place (same length: the header keeps its size).
    const fs::path file = dir.path() / "model.safetensors";
    std::stringstream buffer;
    buffer << std::ifstream(file, std::ios::binary).rdbuf();
    std::string bytes = buffer.str();
    const bool expert = tensor.find("experts") != std::string::npos;
    const std::string from = "\\\"" + tensor + "\\\":\\\"" + (expert ? "int4" : "int8") + "\\\"";
    const std::string to = "\\\"" + tensor + "\\\":\\\"" + (expert ? "int8" : "int2") + "\\\"";
    const size_t at = bytes.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bytes.replace(at, from.size(), to);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    expect_error([&] { test::open_reference_engine(dir.path()); },
                 {"tensor " + tensor, "is stamped " + std::string(expert ? "int8" : "int2")});
  }
}

}  // namespace
}  // namespace glmrt
