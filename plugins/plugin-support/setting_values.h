// Reading the text values of a profile's plugins.<kind>.settings, and the
// messages that refuse one, the same way in every in-tree plugin: a value is
// taken whole or not at all, and a refusal names the plugin, the key, what
// was expected and what was found.
#pragma once

#include <glmrt/plugin/abi.h>

#include <charconv>
#include <string>
#include <string_view>

namespace glmrt::plugin_support {

/// A setting's key or value as text ("" for NULL).
inline std::string_view setting_text(const char* text) {
  return text ? std::string_view(text) : std::string_view();
}

/// An integer in [low, high] written in full in decimal, or false (`out`
/// unchanged).
template <typename Integer>
bool parse_integer(std::string_view text, Integer low, Integer high, Integer& out) {
  Integer value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < low || value > high)
    return false;
  out = value;
  return true;
}

/// `true` or `false`, or false (`out` unchanged).
inline bool parse_flag(std::string_view text, bool& out) {
  if (text != "true" && text != "false") return false;
  out = text == "true";
  return true;
}

/// "PLUGIN: setting `KEY` expects EXPECTED, found `VALUE`".
inline std::string bad_setting(std::string_view plugin, std::string_view key,
                               std::string_view expected, std::string_view value) {
  return std::string(plugin) + ": setting `" + std::string(key) + "` expects " +
         std::string(expected) + ", found `" + std::string(value) + "`";
}

/// "PLUGIN: unknown setting `KEY` (valid settings: VALID)".
inline std::string unknown_setting(std::string_view plugin, std::string_view key,
                                   std::string_view valid) {
  return std::string(plugin) + ": unknown setting `" + std::string(key) +
         "` (valid settings: " + std::string(valid) + ")";
}

}  // namespace glmrt::plugin_support
