#include "io_settings.h"

#include <setting_values.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace glmrt::io_support {
namespace {

/// A count of bytes with an optional unit (B, KB, MB, GB, TB: powers of
/// 1000; KiB, MiB, GiB, TiB: of 1024), at least 1 and below 2^53.
bool parse_bytes_per_second(std::string_view text, uint64_t& out) {
  size_t digits = 0;
  while (digits < text.size() &&
         ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.'))
    ++digits;
  if (digits == 0 || digits > 24) return false;
  const std::string number(text.substr(0, digits));
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return false;
  const std::string_view unit = text.substr(digits);
  struct Unit {
    std::string_view name;
    double scale;
  };
  static constexpr Unit kUnits[] = {{"", 1},
                                    {"B", 1},
                                    {"KB", 1e3},
                                    {"MB", 1e6},
                                    {"GB", 1e9},
                                    {"TB", 1e12},
                                    {"KiB", 1024.0},
                                    {"MiB", 1048576.0},
                                    {"GiB", 1073741824.0},
                                    {"TiB", 1099511627776.0}};
  for (const Unit& u : kUnits) {
    if (unit != u.name) continue;
    const double bytes = value * u.scale;
    if (!(bytes >= 1) || bytes >= 9007199254740992.0) return false;
    out = static_cast<uint64_t>(bytes);
    return true;
  }
  return false;
}

/// Most copies one plugin reads from: more drives than any PC holds.
constexpr size_t kMaxMirrors = 16;

/// `mirrors`: entries one per line, each `FOLDER` or `FOLDER@RATE` (an `@`
/// after the folder's last `/` starts its read cap).
bool parse_mirrors(std::string_view text, std::vector<MirrorEntry>& out, std::string& why) {
  out.clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view entry = text.substr(start, end - start);
    start = end + 1;
    while (!entry.empty() && (entry.front() == ' ' || entry.front() == '\t'))
      entry.remove_prefix(1);
    while (!entry.empty() && (entry.back() == ' ' || entry.back() == '\t' || entry.back() == '\r'))
      entry.remove_suffix(1);
    if (entry.empty()) continue;
    MirrorEntry mirror;
    const size_t slash = entry.rfind('/');
    const size_t at = entry.rfind('@');
    if (at != std::string_view::npos && (slash == std::string_view::npos || at > slash)) {
      if (!parse_bytes_per_second(entry.substr(at + 1), mirror.max_bytes_per_second)) {
        why = "the read cap after `@` in `" + std::string(entry) +
              "` is not a positive byte count or a size such as 500MB";
        return false;
      }
      entry = entry.substr(0, at);
    }
    if (entry.empty() || entry.front() != '/') {
      why = std::string("`").append(entry).append("` is not an absolute folder");
      return false;
    }
    mirror.folder = std::string(entry);
    out.push_back(std::move(mirror));
  }
  if (out.empty()) {
    why = "no folder given";
    return false;
  }
  if (out.size() > kMaxMirrors) {
    why = std::to_string(out.size()) + " folders; at most " + std::to_string(kMaxMirrors);
    return false;
  }
  return true;
}

}  // namespace

bool parse_io_settings(const IoSettingsRules& rules, const glmrt_setting* settings,
                       size_t n_settings, IoSettings& out, std::string& error) {
  using plugin_support::bad_setting, plugin_support::parse_flag, plugin_support::parse_integer,
      plugin_support::setting_text, plugin_support::unknown_setting;
  out = rules.defaults;
  for (size_t i = 0; i < n_settings; ++i) {
    const std::string_view key = setting_text(settings[i].key);
    const std::string_view value = setting_text(settings[i].value);
    if (key == "threads") {
      if (!parse_integer(value, 1, rules.max_threads, out.threads)) {
        error = bad_setting(rules.plugin, key,
                            "an integer from 1 to " + std::to_string(rules.max_threads), value);
        return false;
      }
    } else if (key == "drop_after_read" && rules.takes_drop_after_read) {
      if (!parse_flag(value, out.drop_after_read)) {
        error = bad_setting(rules.plugin, key, "true or false", value);
        return false;
      }
    } else if (key == "max_bytes_per_second") {
      if (!parse_bytes_per_second(value, out.max_bytes_per_second)) {
        error = bad_setting(rules.plugin, key,
                            "a positive byte count, or a size such as 500MB, 200MiB or 1.5GB "
                            "(per second)",
                            value);
        return false;
      }
    } else if (key == "cap_credit_seconds") {
      char* end = nullptr;
      const std::string number(value);
      const double seconds = std::strtod(number.c_str(), &end);
      if (number.empty() || end != number.c_str() + number.size() || !(seconds >= 0) ||
          seconds > 1) {
        error = bad_setting(rules.plugin, key, "a number of seconds from 0 to 1", value);
        return false;
      }
      out.cap_credit = std::chrono::duration_cast<ByteRateLimit::Clock::duration>(
          std::chrono::duration<double>(seconds));
    } else if (key == "mirrors") {
      std::string why;
      if (!parse_mirrors(value, out.mirrors, why)) {
        error = bad_setting(rules.plugin, key,
                            "absolute folders holding copies of the model's files, one per line "
                            "(a YAML list), each optionally `FOLDER@RATE` (" +
                                why + ")",
                            value);
        return false;
      }
    } else {
      error = unknown_setting(rules.plugin, key,
                              rules.takes_drop_after_read
                                  ? "threads, drop_after_read, max_bytes_per_second, "
                                    "cap_credit_seconds, mirrors"
                                  : "threads, max_bytes_per_second, cap_credit_seconds, mirrors");
      return false;
    }
  }
  return true;
}

}  // namespace glmrt::io_support
