#include "fault_plan.h"

#include <setting_values.h>

#include <string_view>

namespace glmrt::fault_io {

bool parse_settings(const glmrt_setting* settings, size_t n_settings, FaultSettings& out,
                    std::string& error) {
  using plugin_support::bad_setting, plugin_support::parse_flag, plugin_support::parse_integer,
      plugin_support::setting_text;
  constexpr uint64_t kMaxRead = uint64_t{1} << 62;
  for (size_t i = 0; i < n_settings; ++i) {
    const std::string_view key = setting_text(settings[i].key);
    const std::string_view value = setting_text(settings[i].value);
    auto bad = [&](const char* expected) {
      error = bad_setting("fault-io", key, expected, value);
      return false;
    };
    if (key == "eio_at") {
      if (!parse_integer<uint64_t>(value, 1, kMaxRead, out.eio_at))
        return bad("a read number >= 1");
    } else if (key == "short_read_at") {
      if (!parse_integer<uint64_t>(value, 1, kMaxRead, out.short_read_at))
        return bad("a read number >= 1");
    } else if (key == "short_read_every") {
      if (!parse_integer<uint64_t>(value, 1, kMaxRead, out.short_read_every))
        return bad("a count >= 1");
    } else if (key == "short_reads_reported") {
      if (!parse_flag(value, out.short_reads_reported)) return bad("true or false");
    } else if (key == "latency_ms") {
      if (!parse_integer<uint32_t>(value, 0, 60000, out.latency_ms))
        return bad("milliseconds from 0 to 60000");
    } else {
      error = plugin_support::unknown_setting(
          "fault-io", key,
          "eio_at, short_read_at, short_read_every, short_reads_reported, latency_ms");
      return false;
    }
  }
  return true;
}

Fault FaultPlan::fault_for(uint64_t read_number) const {
  Fault fault;
  fault.read_number = read_number;
  fault.latency_ms = settings_.latency_ms;
  const uint64_t n = fault.read_number;
  if (n == settings_.eio_at)
    fault.kind = FaultKind::eio;
  else if (n == settings_.short_read_at ||
           (settings_.short_read_every > 0 && n % settings_.short_read_every == 0))
    fault.kind = FaultKind::short_read;
  return fault;
}

}  // namespace glmrt::fault_io
