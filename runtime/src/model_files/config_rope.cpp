#include "config_rope.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include <glmrt/base/error.h>

namespace glmrt {

double yarn_mscale(double factor, double m) {
  return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0;
}

namespace model_files {

namespace {

using nlohmann::json;

// Keys of a rope object glmrt reads; any other is refused rather than ignored.
constexpr std::array<std::string_view, 3> kPlainRopeKeys = {"rope_type", "type", "rope_theta"};
constexpr std::array<std::string_view, 8> kYarnKeys = {
    "factor",           "original_max_position_embeddings",
    "beta_fast",        "beta_slow",
    "mscale",           "mscale_all_dim",
    "attention_factor", "truncate"};

/// One rope object (`rope_parameters` or `rope_scaling`) and the key it came from.
class RopeObject {
 public:
  RopeObject(const ConfigFields& fields, const json& object, std::string_view key)
      : fields_(fields), object_(object), key_(key) {
    if (!object.is_object())
      fail("{}: key '{}' must be an object, found {}", fields.file(), key, object.dump());
  }

  const json* member(std::string_view name) const {
    const auto it = object_.find(name);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string path(std::string_view name) const {
    return std::string(key_) + "." + std::string(name);
  }
  double number(std::string_view name, double fallback) const {
    const json* value = member(name);
    return value ? fields_.as_number(*value, path(name)) : fallback;
  }

  /// "default", "yarn", ...; `rope_type` and the legacy `type` must agree.
  std::string type() const {
    const json* type = member("rope_type");
    const json* legacy = member("type");
    if (type == nullptr && legacy == nullptr)
      fail("{}: key '{}' is {} without a rope_type: expected \"default\" or \"yarn\"",
           fields_.file(), key_, object_.dump());
    const std::string name =
        fields_.as_string(type ? *type : *legacy, path(type ? "rope_type" : "type"));
    if (type && legacy && fields_.as_string(*legacy, path("type")) != name)
      fail("{}: keys '{}' and '{}' disagree ({} vs {})", fields_.file(), path("rope_type"),
           path("type"), type->dump(), legacy->dump());
    if (name != "default" && name != "yarn")
      fail("{}: key '{}' is \"{}\": glmrt computes the \"default\" RoPE and \"yarn\" only",
           fields_.file(), path(type ? "rope_type" : "type"), name);
    return name;
  }

  void refuse_unread_keys(bool yarn) const {
    for (const auto& [name, value] : object_.items()) {
      const bool plain =
          std::find(kPlainRopeKeys.begin(), kPlainRopeKeys.end(), name) != kPlainRopeKeys.end();
      const bool scaling = std::find(kYarnKeys.begin(), kYarnKeys.end(), name) != kYarnKeys.end();
      if (name == "partial_rotary_factor" && value.is_number() && value.get<double>() == 1.0)
        continue;  // the whole rope slice rotates, which is what glmrt does
      if (plain || (yarn && scaling)) continue;
      fail(
          "{}: key '{}' is not read by glmrt for a {} RoPE (it reads {})", fields_.file(),
          path(name), yarn ? "yarn" : "default",
          yarn
              ? "rope_type, rope_theta and the YaRN keys factor, original_max_position_embeddings, "
                "beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor, truncate"
              : "rope_type and rope_theta");
    }
  }

  const json& object() const { return object_; }
  std::string_view key() const { return key_; }

 private:
  const ConfigFields& fields_;
  const json& object_;
  std::string_view key_;
};

void require_positive_number(const ConfigFields& fields, const std::string& key, double value) {
  if (!(value > 0) || !std::isfinite(value))
    fail("{}: key '{}' must be a positive number, found {}", fields.file(), key, value);
}

void read_yarn(const ConfigFields& fields, const RopeObject& rope, int max_position_embeddings,
               RopeSettings& out) {
  YarnScaling& s = out.scaling;
  s.original_max_position_embeddings =
      rope.number("original_max_position_embeddings", max_position_embeddings);
  require_positive_number(fields, rope.path("original_max_position_embeddings"),
                          s.original_max_position_embeddings);
  // transformers: an absent factor is max_position_embeddings / original.
  s.factor = rope.number("factor", max_position_embeddings / s.original_max_position_embeddings);
  require_positive_number(fields, rope.path("factor"), s.factor);
  // `beta_fast or 32`: a 0 means the default, as in transformers.
  s.beta_fast = rope.number("beta_fast", 0);
  s.beta_slow = rope.number("beta_slow", 0);
  if (s.beta_fast == 0) s.beta_fast = 32;
  if (s.beta_slow == 0) s.beta_slow = 1;
  require_positive_number(fields, rope.path("beta_fast"), s.beta_fast);
  require_positive_number(fields, rope.path("beta_slow"), s.beta_slow);
  if (const json* truncate = rope.member("truncate")) {
    if (!truncate->is_boolean())
      fail("{}: key '{}' must be true or false, found {}", fields.file(), rope.path("truncate"),
           truncate->dump());
    s.truncate = truncate->get<bool>();
  }
  const double mscale = rope.number("mscale", 0), mscale_all_dim = rope.number("mscale_all_dim", 0);
  if (const json* factor = rope.member("attention_factor")) {
    out.attention_factor = fields.as_number(*factor, rope.path("attention_factor"));
    require_positive_number(fields, rope.path("attention_factor"), out.attention_factor);
  } else if (mscale != 0 && mscale_all_dim != 0) {
    out.attention_factor = yarn_mscale(s.factor, mscale) / yarn_mscale(s.factor, mscale_all_dim);
  } else {
    out.attention_factor = yarn_mscale(s.factor, 1.0);
  }
  if (mscale_all_dim != 0) {
    const double m = yarn_mscale(s.factor, mscale_all_dim);
    out.softmax_multiplier = m * m;
  }
  if (!std::isfinite(out.attention_factor) || !(out.attention_factor > 0) ||
      !std::isfinite(out.softmax_multiplier) || !(out.softmax_multiplier > 0))
    fail(
        "{}: key '{}' gives a YaRN attention factor {} and softmax multiplier {}: expected "
        "positive numbers (check mscale / mscale_all_dim)",
        fields.file(), rope.key(), out.attention_factor, out.softmax_multiplier);
}

}  // namespace

RopeSettings read_rope_settings(const ConfigFields& fields, int max_position_embeddings) {
  RopeSettings out;
  out.theta = fields.optional_number("rope_theta", 10000.0);
  const json* parameters = fields.optional("rope_parameters");
  const json* scaling = fields.optional("rope_scaling");
  if (parameters == nullptr && scaling == nullptr) return out;
  // transformers v5 reads rope_parameters when a config has it; rope_scaling
  // beside it may only repeat the default.
  const RopeObject rope(fields, parameters ? *parameters : *scaling,
                        parameters ? "rope_parameters" : "rope_scaling");
  if (parameters && scaling && RopeObject(fields, *scaling, "rope_scaling").type() != "default")
    fail(
        "{}: keys 'rope_parameters' and 'rope_scaling' both give the RoPE: glmrt reads "
        "rope_parameters, so rope_scaling may only be the \"default\" type (found {})",
        fields.file(), scaling->dump());
  if (const json* theta = rope.member("rope_theta"))
    out.theta = fields.as_number(*theta, rope.path("rope_theta"));
  out.yarn = rope.type() == "yarn";
  rope.refuse_unread_keys(out.yarn);
  // YaRN's correction range divides by ln(theta).
  if (out.yarn && !(out.theta > 1 && std::isfinite(out.theta)))
    fail("{}: rope_theta is {}, but a yarn RoPE needs a finite rope_theta above 1", fields.file(),
         out.theta);
  if (out.yarn) read_yarn(fields, rope, max_position_embeddings, out);
  return out;
}

}  // namespace model_files
}  // namespace glmrt
