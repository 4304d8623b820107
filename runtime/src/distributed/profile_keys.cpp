#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/distributed/profile_keys.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

namespace glmrt {
namespace {

void flatten(const YAML::Node& node, const std::string& path, ProfileKeys& out) {
  if (node.IsMap()) {
    for (const auto& entry : node) {
      const std::string key = entry.first.as<std::string>();
      if (path.empty() && key == "model") continue;
      flatten(entry.second, path.empty() ? key : path + "." + key, out);
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i)
      flatten(node[i], path + "[" + std::to_string(i) + "]", out);
  } else if (node.IsScalar()) {
    out.emplace_back(path, node.Scalar());
  } else {
    out.emplace_back(path, "(null)");
  }
}

}  // namespace

ProfileKeys profile_keys(const std::filesystem::path& file) {
  const std::string text = read_input_file(file, input_kinds::profile);
  ProfileKeys keys;
  try {
    flatten(YAML::Load(text), "", keys);
  } catch (const YAML::Exception& e) {
    fail("{}: invalid YAML: {}", file.string(), e.msg);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::optional<ProfileDifference> first_difference(const ProfileKeys& ours,
                                                  const ProfileKeys& theirs) {
  std::map<std::string, std::pair<std::string, std::string>> both;
  constexpr const char* kAbsent = "(absent)";
  for (const auto& [key, value] : ours) both[key] = {value, kAbsent};
  for (const auto& [key, value] : theirs) {
    auto [it, added] = both.try_emplace(key, kAbsent, value);
    if (!added) it->second.second = value;
  }
  for (const auto& [key, values] : both)
    if (values.first != values.second) return ProfileDifference{key, values.first, values.second};
  return std::nullopt;
}

}  // namespace glmrt
