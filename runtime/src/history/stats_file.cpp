#include <glmrt/base/error.h>
#include <glmrt/base/text_file.h>
#include <glmrt/history/stats_file.h>

#include <fmt/format.h>

#include <sstream>

namespace glmrt {

ExpertUsage parse_stats(std::string_view text, int layers, int experts, const std::string& source) {
  ExpertUsage usage(layers, experts);
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream fields(line);
    long long layer = -1, expert = -1, count = -1;
    std::string extra;
    if (!(fields >> layer >> expert >> count) || (fields >> extra) || count < 0)
      fail("{}:{}: expected `layer expert count` (three non-negative integers), found `{}`", source,
           number, line);
    if (layer < 0 || layer >= layers || expert < 0 || expert >= experts)
      fail("{}:{}: layer {} expert {} is outside this model ({} layers incl. MTP, {} experts)",
           source, number, layer, expert, layers, experts);
    usage.add(static_cast<int>(layer), static_cast<int>(expert), static_cast<uint64_t>(count));
  }
  return usage;
}

ExpertUsage read_stats_file(const std::filesystem::path& file, int layers, int experts) {
  return parse_stats(read_text_file(file, "the STATS file"), layers, experts, file.string());
}

std::string format_stats(const ExpertUsage& usage) {
  std::string text;
  for (int l = 0; l < usage.layers(); ++l)
    for (int e = 0; e < usage.experts(); ++e)
      if (const uint64_t n = usage.count(l, e)) text += fmt::format("{} {} {}\n", l, e, n);
  return text;
}

}  // namespace glmrt
