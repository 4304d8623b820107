#include "quant_format_stamp.h"

#include <array>
#include <unordered_map>
#include <utility>

#include <glmrt/base/error.h>
#include <glmrt/base/weight_precision.h>

namespace glmrt {

namespace {

constexpr std::array<std::pair<StampedFormat, std::string_view>, 9> kStampNames{{
    {StampedFormat::f32, "f32"},
    {StampedFormat::bf16, "bf16"},
    {StampedFormat::int8, "int8"},
    {StampedFormat::int4, "int4"},
    {StampedFormat::int3, "int3"},
    {StampedFormat::int2, "int2"},
    {StampedFormat::int4k, "int4-k32"},
    {StampedFormat::int3k, "int3-k32"},
    {StampedFormat::int2k, "int2-k16"},
}};

}  // namespace

std::string_view stamped_format_name(StampedFormat f) {
  for (const auto& [format, name] : kStampNames)
    if (format == f) return name;
  return "none";
}

std::optional<WeightPrecision> stamped_precision(StampedFormat f, uint32_t group) {
  switch (f) {
    case StampedFormat::none:
      return std::nullopt;
    case StampedFormat::f32:
      return WeightPrecision(WeightBits::f32);
    case StampedFormat::bf16:
      return WeightPrecision(WeightBits::bf16);
    case StampedFormat::int8:
      return WeightPrecision(WeightBits::int8, group);
    case StampedFormat::int4:
      return WeightPrecision(WeightBits::int4, group);
    case StampedFormat::int3:
      return WeightPrecision(WeightBits::int3, group);
    case StampedFormat::int2:
      return WeightPrecision(WeightBits::int2, group);
    case StampedFormat::int4k:
      return WeightPrecision::two_level_of(WeightBits::int4);
    case StampedFormat::int3k:
      return WeightPrecision::two_level_of(WeightBits::int3);
    case StampedFormat::int2k:
      return WeightPrecision::two_level_of(WeightBits::int2);
  }
  return std::nullopt;
}

StampedFormat stamp_of_precision(WeightPrecision p) {
  // The stamp names the bits (and a two-level format); the group goes beside it.
  const std::string wanted = p.two_level ? precision_name(p) : precision_name(p.bits);
  for (const auto& [format, name] : kStampNames)
    if (name == wanted) return format;
  return StampedFormat::none;
}

std::string stamp_text(StampedFormat f, uint32_t group) {
  const auto p = stamped_precision(f, group);
  return p ? precision_name(*p) : std::string(stamped_format_name(f));
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
    case StampedFormat::int3:
    case StampedFormat::int2:
    case StampedFormat::int4k:
    case StampedFormat::int3k:
    case StampedFormat::int2k:
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
      const StampedFormat format = stamp_of_precision(*p);
      if (format != StampedFormat::none) return {format, p->group};
    }
  }
  fail(
      "{}: __metadata__.{} stamps tensor '{}' with {}; expected one of \"f32\", \"bf16\", "
      "\"int8\", \"int4\", \"int3\", \"int2\", a per-group form such as \"int4-g64\" or a "
      "two-level \"int4-k32\", \"int3-k32\", \"int2-k16\"",
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
          "{}: tensor '{}' is stamped {} but stored as {} (f32 is F32, bf16 is BF16; int8, int4, "
          "int3 and int2 are packed U8 with per-row F32 scales in '{}.qs', or per-group ones in "
          "'.gqs')",
          file, name, stamped_format_name(format), dtype_name(t.dtype), name);
    }
    t.stamp = format;
    t.stamp_group = group;
  }
}

}  // namespace model_files
}  // namespace glmrt
