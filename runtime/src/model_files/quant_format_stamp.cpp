#include "quant_format_stamp.h"

#include <array>
#include <unordered_map>
#include <utility>

#include <glmrt/base/error.h>
#include <glmrt/base/weight_precision.h>

namespace glmrt {

namespace {

constexpr std::array<std::pair<StampedFormat, std::string_view>, 5> kStampNames{{
    {StampedFormat::f32, "f32"},
    {StampedFormat::bf16, "bf16"},
    {StampedFormat::int8, "int8"},
    {StampedFormat::int4, "int4"},
    {StampedFormat::int2, "int2"},
}};

}  // namespace

std::string_view stamped_format_name(StampedFormat f) {
  for (const auto& [format, name] : kStampNames)
    if (format == f) return name;
  return "none";
}

namespace model_files {

namespace {

using nlohmann::json;

constexpr std::string_view kStampKey = "quant_formats";

bool dtype_fits(StampedFormat format, DType dtype) {
  switch (format) {
    case StampedFormat::f32:
      return dtype == DType::F32;
    case StampedFormat::bf16:
      return dtype == DType::BF16;
    case StampedFormat::int8:
    case StampedFormat::int4:
    case StampedFormat::int2:
      return dtype == DType::U8 || dtype == DType::I8;
    case StampedFormat::none:
      return true;
  }
  return false;
}

std::pair<StampedFormat, uint32_t> parse_format(const json& value, const std::string& tensor,
                                                const std::filesystem::path& file) {
  if (value.is_string()) {
    if (const auto p = parse_precision(value.get_ref<const std::string&>())) {
      const std::string bits = precision_name(WeightPrecision(p->bits));
      for (const auto& [format, name] : kStampNames)
        if (bits == name) return {format, p->group};
    }
  }
  fail(
      "{}: __metadata__.{} stamps tensor '{}' with {}; expected one of \"f32\", \"bf16\", "
      "\"int8\", \"int4\", \"int2\", or a per-group form such as \"int4-g64\"",
      file, kStampKey, tensor, value.dump());
}

}  // namespace

void apply_quant_format_stamp(const json& metadata, std::vector<TensorInfo>& tensors,
                              const std::filesystem::path& file) {
  const auto it = metadata.find(kStampKey);
  if (it == metadata.end()) return;
  if (!it->is_string()) {
    fail(
        "{}: __metadata__.{} must be a string holding a JSON object {{tensor name: format}}, "
        "found {}",
        file, kStampKey, it->type_name());
  }
  json stamps;
  try {
    stamps = json::parse(it->get_ref<const std::string&>());
  } catch (const json::parse_error& e) {
    fail("{}: __metadata__.{} is not valid JSON: {}", file, kStampKey, e.what());
  }
  if (!stamps.is_object()) {
    fail("{}: __metadata__.{} must hold a JSON object {{tensor name: format}}, found {}", file,
         kStampKey, stamps.type_name());
  }
  std::unordered_map<std::string_view, TensorInfo*> by_name;
  by_name.reserve(tensors.size());
  for (TensorInfo& t : tensors) by_name.emplace(t.name, &t);
  for (const auto& [name, value] : stamps.items()) {
    const auto [format, group] = parse_format(value, name, file);
    const auto found = by_name.find(name);
    if (found == by_name.end()) {
      fail("{}: __metadata__.{} stamps tensor '{}' as {}, but this file holds no such tensor", file,
           kStampKey, name, stamped_format_name(format));
    }
    TensorInfo& t = *found->second;
    if (!dtype_fits(format, t.dtype)) {
      fail(
          "{}: tensor '{}' is stamped {} but stored as {} (f32 is F32, bf16 is BF16; int8, int4 "
          "and int2 are packed U8 with per-row F32 scales in '{}.qs', or per-group ones in "
          "'.gqs')",
          file, name, stamped_format_name(format), dtype_name(t.dtype), name);
    }
    t.stamp = format;
    t.stamp_group = group;
  }
}

}  // namespace model_files
}  // namespace glmrt
