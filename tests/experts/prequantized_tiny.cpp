#include "prequantized_tiny.h"

#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/row_packing.h>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "checkpoint_generator.h"

namespace glmrt::test {
namespace {

const std::filesystem::path kTiny = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";

/// `t` [rows, cols] quantized row by row: packed bytes (U8) and scales.
std::pair<HostTensor, HostTensor> quantize(const HostTensor& t, uint32_t type) {
  const int64_t rows = t.shape.at(0), cols = t.shape.at(1);
  const int64_t row_bytes = plugin::packed_row_bytes(type, cols);
  HostTensor packed{t.name, {rows * row_bytes}, {}, StoredDType::u8};
  HostTensor scales{
      t.name + ".qs", {rows}, std::vector<float>(static_cast<size_t>(rows)), StoredDType::f32};
  std::vector<std::byte> bytes(static_cast<size_t>(row_bytes));
  for (int64_t r = 0; r < rows; ++r) {
    pack_row(std::span(t.values).subspan(static_cast<size_t>(r * cols), static_cast<size_t>(cols)),
             type, bytes.data(), &scales.values[static_cast<size_t>(r)]);
    for (std::byte b : bytes) packed.values.push_back(static_cast<float>(b));
  }
  return {std::move(packed), std::move(scales)};
}

}  // namespace

void write_prequantized_tiny(const std::filesystem::path& dir, uint32_t packed_type,
                             ContainerLayout layout) {
  nlohmann::json config;
  std::ifstream(kTiny / "config.json") >> config;
  const TensorList tiny = read_checkpoint_tensors(kTiny);
  TensorList out;
  std::map<int, std::pair<TensorList, TensorList>> by_layer;  // matrices, scales
  for (const HostTensor& t : tiny) {
    // "model.layers.L.mlp.experts.E.*" (no std::regex: GCC 12 fails -Werror
    // inside it in the sanitizer build).
    constexpr std::string_view kLayers = "model.layers.";
    if (!t.name.starts_with(kLayers) || t.name.find(".mlp.experts.") == std::string::npos) {
      out.push_back(t);
      continue;
    }
    auto [packed, scales] = quantize(t, packed_type);
    auto& [matrices, layer_scales] = by_layer[std::stoi(t.name.substr(kLayers.size()))];
    matrices.push_back(std::move(packed));
    if (layout == ContainerLayout::contiguous)
      matrices.push_back(std::move(scales));
    else
      layer_scales.push_back(std::move(scales));
  }
  for (auto& [layer, parts] : by_layer) {
    for (HostTensor& t : parts.first) out.push_back(std::move(t));
    for (HostTensor& t : parts.second) out.push_back(std::move(t));
  }
  write_checkpoint(dir, config, out, 2);
}

}  // namespace glmrt::test
