#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_maker/gguf_types.h>
#include <glmrt/plugin/ggml_types.h>
#include <glmrt/plugin/weight_format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace glmrt {
namespace {

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return std::string(text);
}

uint32_t type_named(std::string_view name) {
  const std::string wanted = upper(trimmed(name));
  std::vector<std::string> names;
  for (const uint32_t t : writable_ggml_types()) {
    names.emplace_back(plugin::ggml_type_traits(t).name);
    if (names.back() == wanted) return t;
  }
  fail("--gguf-types: unknown ggml type `{}` (make-model writes: {})", printable(name),
       fmt::join(names, ", "));
}

std::optional<GgufRole> role_named(std::string_view name) {
  if (name == "experts") return GgufRole::experts;
  if (name == "dense") return GgufRole::dense;
  if (name == "kv_b") return GgufRole::kv_b;
  if (name == "embed") return GgufRole::embed;
  if (name == "output") return GgufRole::output;
  return std::nullopt;
}

}  // namespace

uint32_t GgufTypes::of(GgufRole role) const {
  switch (role) {
    case GgufRole::experts:
      return experts;
    case GgufRole::dense:
      return dense;
    case GgufRole::kv_b:
      return kv_b;
    case GgufRole::embed:
      return embed;
    case GgufRole::output:
      return output;
  }
  return dense;
}

std::vector<uint32_t> writable_ggml_types() {
  std::vector<uint32_t> out = {GLMRT_GGML_F32, GLMRT_GGML_BF16};
  out.insert(out.end(), std::begin(plugin::kGgmlWeightTypes), std::end(plugin::kGgmlWeightTypes));
  return out;
}

GgufTypes parse_gguf_types(std::string_view spec) {
  if (trimmed(spec).empty()) fail("--gguf-types: empty (expected e.g. experts=Q4_K,dense=Q8_0)");
  if (spec.find('=') == std::string_view::npos) {
    const uint32_t t = type_named(spec);
    return {t, t, t, t, t};
  }
  std::optional<uint32_t> given[5];
  size_t at = 0;
  while (at <= spec.size()) {
    const size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string_view pair = spec.substr(at, comma - at);
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos)
      fail("--gguf-types: `{}` is not role=TYPE (roles: experts, dense, kv_b, embed, output)",
           printable(pair));
    const std::string role_text = trimmed(pair.substr(0, eq));
    const auto role = role_named(role_text);
    if (!role)
      fail("--gguf-types: unknown role `{}` (roles: experts, dense, kv_b, embed, output)",
           printable(role_text));
    auto& slot = given[static_cast<int>(*role)];
    if (slot) fail("--gguf-types: role `{}` given twice", role_text);
    slot = type_named(pair.substr(eq + 1));
    at = comma + 1;
  }
  const auto pick = [&](GgufRole r, uint32_t fallback) {
    return given[static_cast<int>(r)].value_or(fallback);
  };
  GgufTypes t{};
  t.experts = pick(GgufRole::experts, GLMRT_GGML_Q4_K);
  t.dense = pick(GgufRole::dense, GLMRT_GGML_Q8_0);
  t.kv_b = pick(GgufRole::kv_b, t.dense);
  t.embed = pick(GgufRole::embed, t.dense);
  t.output = pick(GgufRole::output, t.dense);
  return t;
}

}  // namespace glmrt
