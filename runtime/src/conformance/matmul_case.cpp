#include <glmrt/conformance/matmul_case.h>

#include <fmt/format.h>

#include <random>

namespace glmrt::conformance {
namespace {

std::string element_name(uint32_t type) {
  const char* name = plugin::element_type_name(type);
  return name ? name : fmt::format("type{}", type);
}

/// Shapes every format runs: O = 1; I and O one off multiples of 8, 16, 32,
/// 64; I smaller than any SIMD block; I = 1; a larger I with a ragged tail.
struct Shape {
  int64_t S, O, I;
};
constexpr Shape kEdgeShapes[] = {
    {1, 1, 1},     {1, 1, 7},    {2, 1, 33},   {3, 5, 31},   {1, 3, 64},    {7, 17, 65},
    {16, 9, 127},  {64, 3, 129}, {1, 37, 255}, {3, 64, 256}, {7, 13, 1000}, {16, 31, 300},
    {1, 129, 513}, {2, 4, 2085}, {64, 1, 95},  {3, 63, 191}, {1, 8, 16},    {16, 16, 1},
};

constexpr int64_t kRandomS[] = {1, 2, 3, 7, 16, 64};

}  // namespace

std::string WeightFormatSpec::name() const {
  if (group_size == 0 || plugin::is_two_level(element_type)) return element_name(element_type);
  return fmt::format("{}-g{}", element_name(element_type), group_size);
}

glmrt_weight_format WeightFormatSpec::to_format(uint32_t alignment) const {
  glmrt_weight_format format{};
  format.struct_size = sizeof(glmrt_weight_format);
  format.element_type = element_type;
  format.group_size = group_size;
  format.packing = 0;
  format.alignment = alignment;
  return format;
}

std::string MatmulCase::name() const {
  return fmt::format("{} S={} O={} I={} {} {}", format.name(), S, O, I,
                     activations == ActivationKind::kGaussian ? "gaussian" : "exact-int8",
                     padded_rows ? "padded" : "packed");
}

std::vector<WeightFormatSpec> conformance_formats() {
  std::vector<WeightFormatSpec> formats = {{GLMRT_F32, 0}, {GLMRT_BF16, 0}, {GLMRT_I8, 0},
                                           {GLMRT_I4, 0},  {GLMRT_I2, 0},   {GLMRT_I3, 0}};
  for (uint32_t type : {GLMRT_I8, GLMRT_I4, GLMRT_I2, GLMRT_I3})
    for (uint32_t group : {32u, 64u, 128u, 16u, 48u}) formats.push_back({type, group});
  for (uint32_t type : {GLMRT_I4K, GLMRT_I3K, GLMRT_I2K})
    formats.push_back({type, static_cast<uint32_t>(plugin::kTwoLevelBlock)});
  for (const uint32_t ggml_type : plugin::kGgmlWeightTypes)
    formats.push_back({plugin::ggml_element_type(ggml_type), 0});
  return formats;
}

std::vector<MatmulCase> conformance_cases(const WeightFormatSpec& format) {
  // Seeded by the format, so a failure names a case that reproduces.
  std::mt19937_64 random(0x9E3779B97F4A7C15ull ^ (uint64_t{format.element_type} << 32) ^
                         format.group_size);
  // Both activation kinds for every type a plugin may meet with int8
  // activations; ggml rows are whole blocks, so I is fitted to them.
  const bool quantized =
      plugin::is_quantized(format.element_type) || plugin::is_ggml_blocks(format.element_type);
  std::vector<MatmulCase> cases;
  auto add = [&](int64_t S, int64_t O, int64_t I, ActivationKind kind, bool padded) {
    cases.push_back({format, S, O, format.fit_inputs(I), kind, padded, random()});
  };
  bool padded = false;
  for (const Shape& shape : kEdgeShapes) {
    add(shape.S, shape.O, shape.I, ActivationKind::kGaussian, padded);
    if (quantized) add(shape.S, shape.O, shape.I, ActivationKind::kExactInt8, !padded);
    padded = !padded;
  }
  std::uniform_int_distribution<int64_t> rows(1, 160);
  std::uniform_int_distribution<int64_t> inputs(1, 1200);
  for (int64_t S : kRandomS) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      const int64_t O = rows(random);
      const int64_t I = inputs(random);
      add(S, O, I, ActivationKind::kGaussian, padded);
      if (quantized) add(S, O, I, ActivationKind::kExactInt8, padded);
      padded = !padded;
    }
  }
  return cases;
}

}  // namespace glmrt::conformance
