#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/history/history_file.h>
#include <glmrt/history/model_id.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace glmrt {
namespace {

std::string checksum(std::string_view text) {
  ContentHash hash;
  hash.update(text);
  return hash.hex().substr(0, 16);
}

/// Splits off the next line (without its '\n'); false at the end.
bool next_line(std::string_view& text, std::string_view& line) {
  if (text.empty()) return false;
  const size_t end = text.find('\n');
  if (end == std::string_view::npos) {
    line = text;  // a last line without '\n': the file was cut short
    text = {};
    return true;
  }
  line = text.substr(0, end);
  text.remove_prefix(end + 1);
  return true;
}

template <typename T>
bool parse_number(std::string_view& line, T& out) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), out);
  if (ec != std::errc() || end == line.data()) return false;
  line.remove_prefix(static_cast<size_t>(end - line.data()));
  return true;
}

HistoryRead history_problem(HistoryStatus status, int layers, int experts, std::string what) {
  return {status, ExpertUsage(layers, experts), std::move(what)};
}

}  // namespace

std::string format_history(const std::string& model_id, const ExpertUsage& usage) {
  std::string text = fmt::format("glmrt-expert-usage {}\nmodel {}\nshape {} {}\n", kHistoryVersion,
                                 model_id, usage.layers(), usage.experts());
  for (int l = 0; l < usage.layers(); ++l)
    for (int e = 0; e < usage.experts(); ++e)
      if (const uint64_t n = usage.count(l, e)) text += fmt::format("{} {} {}\n", l, e, n);
  text += fmt::format("end {}\n", checksum(text));
  return text;
}

HistoryRead parse_history(std::string_view text, const std::string& model_id, int layers,
                          int experts) {
  const std::string_view all = text;
  std::string_view line;
  constexpr std::string_view kMagic = "glmrt-expert-usage ";
  if (!next_line(text, line) || !line.starts_with(kMagic))
    return history_problem(HistoryStatus::invalid, layers, experts,
                           "not a glmrt expert usage file");
  line.remove_prefix(kMagic.size());
  int version = 0;
  if (!parse_number(line, version) || !line.empty() || version < 1)
    return history_problem(HistoryStatus::invalid, layers, experts, "its version line is corrupt");
  if (version > kHistoryVersion)
    return history_problem(
        HistoryStatus::future_version, layers, experts,
        fmt::format("it was written by a later glmrt (format version {}, this glmrt "
                    "reads version {})",
                    version, kHistoryVersion));
  // The checksum line ends the file; everything before it is covered.
  const size_t end_at = all.rfind("\nend ");
  if (end_at == std::string_view::npos || !all.ends_with("\n"))
    return history_problem(
        HistoryStatus::invalid, layers, experts,
        "it is truncated (no end line): a write was interrupted or the file was cut");
  const std::string_view body = all.substr(0, end_at + 1);
  const std::string_view stored = all.substr(end_at + 5, all.size() - end_at - 6);
  if (stored != checksum(body))
    return history_problem(HistoryStatus::invalid, layers, experts,
                           "its checksum does not match its content (corrupt)");
  text = body.substr(body.find('\n') + 1);
  if (!next_line(text, line) || !line.starts_with("model "))
    return history_problem(HistoryStatus::invalid, layers, experts, "its model line is missing");
  if (line.substr(6) != model_id)
    return history_problem(HistoryStatus::foreign, layers, experts,
                           fmt::format("it belongs to another model (id {}, this model is {})",
                                       printable(line.substr(6), 80), model_id));
  int file_layers = 0, file_experts = 0;
  if (!next_line(text, line) || !line.starts_with("shape "))
    return history_problem(HistoryStatus::invalid, layers, experts, "its shape line is missing");
  line.remove_prefix(6);
  if (!parse_number(line, file_layers) || !parse_number(line, file_experts) || !line.empty())
    return history_problem(HistoryStatus::invalid, layers, experts, "its shape line is corrupt");
  if (file_layers != layers || file_experts != experts)
    return history_problem(HistoryStatus::foreign, layers, experts,
                           fmt::format("its shape {} x {} is not this model's {} x {}", file_layers,
                                       file_experts, layers, experts));
  ExpertUsage usage(layers, experts);
  while (next_line(text, line)) {
    int l = -1, e = -1;
    uint64_t n = 0;
    if (!parse_number(line, l) || !parse_number(line, e) || !parse_number(line, n) ||
        !line.empty() || l < 0 || l >= layers || e < 0 || e >= experts)
      return history_problem(HistoryStatus::invalid, layers, experts, "a count line is corrupt");
    if (!usage.can_add(n))
      return history_problem(HistoryStatus::invalid, layers, experts,
                             "its counts add up to more than 2^64 - 1 selections");
    usage.add(l, e, n);
  }
  return {HistoryStatus::ok, std::move(usage), {}};
}

InputKind history_file_kind(int layers, int experts) {
  // The header lines, then at most one `layer expert count` line per cell.
  constexpr uint64_t kHeaderBytes = 4096, kLongestCountLine = 64;
  return {"the expert usage history", kHeaderBytes + uint64_t(std::max(layers, 0)) *
                                                         uint64_t(std::max(experts, 0)) *
                                                         kLongestCountLine};
}

HistoryRead read_history(const std::filesystem::path& file, const std::string& model_id, int layers,
                         int experts) {
  std::optional<std::string> text;
  try {
    text = read_input_file_if_present(file, history_file_kind(layers, experts));
  } catch (const Error& e) {
    // The warning names the file already.
    std::string_view reason = e.what();
    if (const std::string prefix = file.string() + ": "; reason.starts_with(prefix))
      reason.remove_prefix(prefix.size());
    return history_problem(HistoryStatus::unreadable, layers, experts, std::string(reason));
  }
  if (!text) return history_problem(HistoryStatus::missing, layers, experts, "no history yet");
  return parse_history(*text, model_id, layers, experts);
}

}  // namespace glmrt
