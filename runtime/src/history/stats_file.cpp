#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/history/stats_file.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

namespace glmrt {
namespace {

/// The next whitespace-separated field of `line` as an unsigned number;
/// nullopt when it is missing or not one (a sign, a fraction, too large).
std::optional<uint64_t> take_stats_number(std::string_view& line) {
  const size_t start = line.find_first_not_of(" \t\r");
  if (start == std::string_view::npos) return std::nullopt;
  line.remove_prefix(start);
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
  const size_t used = static_cast<size_t>(end - line.data());
  if (ec != std::errc() || (used < line.size() && line.find_first_of(" \t\r", used) != used))
    return std::nullopt;
  line.remove_prefix(used);
  return value;
}

}  // namespace

ExpertUsage parse_stats(std::string_view text, int layers, int experts, const std::string& source) {
  ExpertUsage usage(layers, experts);
  InputLines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const int64_t number = lines.number();
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    std::string_view rest = line;
    const auto layer = take_stats_number(rest), expert = take_stats_number(rest),
               count = take_stats_number(rest);
    if (!layer || !expert || !count || rest.find_first_not_of(" \t\r") != std::string_view::npos)
      fail(
          "{}:{}: expected `layer expert count` (three non-negative integers, a count below "
          "2^64), found `{}`",
          source, number, printable(line, 120));
    if (*layer >= uint64_t(layers) || *expert >= uint64_t(experts))
      fail("{}:{}: layer {} expert {} is outside this model ({} layers incl. MTP, {} experts)",
           source, number, *layer, *expert, layers, experts);
    if (!usage.can_add(*count))
      fail(
          "{}:{}: the counts up to this line add up to more than 2^64 - 1 selections (the {} "
          "before it plus {}): refused, as a wrapped count would be wrong",
          source, number, usage.total(), *count);
    usage.add(static_cast<int>(*layer), static_cast<int>(*expert), *count);
  }
  return usage;
}

ExpertUsage read_stats_file(const std::filesystem::path& file, int layers, int experts) {
  // A seed program's file has one line per used cell; room for repeats,
  // blank lines and wide spacing besides.
  constexpr uint64_t kSlackBytes = 1 << 20, kBytesPerCell = 256;
  const InputKind kind{
      "the STATS file",
      kSlackBytes + uint64_t(std::max(layers, 0)) * uint64_t(std::max(experts, 0)) * kBytesPerCell};
  return parse_stats(read_input_file(file, kind), layers, experts, file.string());
}

OutputKind stats_output_kind() {
  return {"a STATS file (`layer expert count` lines)", [](const std::filesystem::path& file) {
            // Its first 64 KiB (whole lines) are blank or three numbers each.
            constexpr size_t kLooked = 64 << 10;
            std::string head = read_file_head(file, kLooked);
            if (head.size() == kLooked) head.resize(head.rfind('\n') + 1);  // npos + 1 == 0
            if (head.empty()) return false;
            InputLines lines(head);
            std::string_view line;
            while (lines.next(line)) {
              if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
              if (!take_stats_number(line) || !take_stats_number(line) ||
                  !take_stats_number(line) ||
                  line.find_first_not_of(" \t\r") != std::string_view::npos)
                return false;
            }
            return true;
          }};
}

std::string format_stats(const ExpertUsage& usage) {
  std::string text;
  for (int l = 0; l < usage.layers(); ++l)
    for (int e = 0; e < usage.experts(); ++e)
      if (const uint64_t n = usage.count(l, e)) text += fmt::format("{} {} {}\n", l, e, n);
  return text;
}

}  // namespace glmrt
