#include <glmrt/history/usage_svg.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace glmrt {
namespace {

std::string svg_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// White (0) through orange to dark red (1).
std::string heat_colour(double v) {
  v = std::clamp(v, 0.0, 1.0);
  const int r = static_cast<int>(255 - 80 * v);
  const int g = static_cast<int>(255 - 235 * std::sqrt(v));
  const int b = static_cast<int>(255 - 255 * std::sqrt(std::sqrt(v)));
  return fmt::format("#{:02x}{:02x}{:02x}", r, std::max(g, 0), std::max(b, 0));
}

}  // namespace

OutputKind svg_output_kind() {
  return {"an SVG image", [](const std::filesystem::path& file) {
            const std::string head = read_file_head(file, 4096);
            const size_t start = head.find_first_not_of(" \t\r\n");
            if (start == std::string::npos) return false;
            const std::string_view text = std::string_view(head).substr(start);
            return (text.starts_with("<svg") || text.starts_with("<?xml")) &&
                   text.find("<svg") != std::string_view::npos;
          }};
}

std::string usage_heatmap_svg(const ExpertUsage& usage, const std::vector<std::string>& row_names,
                              const std::string& title) {
  std::vector<int> rows;
  for (int l = 0; l < usage.layers(); ++l)
    if (usage.layer_total(l) > 0) rows.push_back(l);
  const int E = usage.experts();
  const int cell_w = std::max(2, std::min(16, 1024 / std::max(E, 1)));
  const int cell_h =
      std::max(4, std::min(16, 800 / std::max<int>(static_cast<int>(rows.size()), 1)));
  const int left = 70, top = 40, bottom = 40;
  const int width = left + E * cell_w + 20;
  const int height = top + static_cast<int>(rows.size()) * cell_h + bottom;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"20\" font-size=\"14\">{}</text>\n",
      width, height, left, svg_escape(title));
  for (size_t r = 0; r < rows.size(); ++r) {
    const int l = rows[r];
    const auto row = usage.row(l);
    const uint64_t peak = *std::max_element(row.begin(), row.end());
    const int y = top + static_cast<int>(r) * cell_h;
    const std::string name =
        l < static_cast<int>(row_names.size()) ? row_names[l] : fmt::format("{}", l);
    if (cell_h >= 9 || r % 5 == 0)
      svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 4,
                         y + cell_h - 2, svg_escape(name));
    for (int e = 0; e < E; ++e) {
      if (!row[e]) continue;
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>layer {} expert "
          "{}: {}</title></rect>\n",
          left + e * cell_w, y, cell_w, cell_h, heat_colour(double(row[e]) / double(peak)), name, e,
          row[e]);
    }
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\">expert id 0..{} (colour: selections / the layer's most used "
      "expert)</text>\n</svg>\n",
      left, height - 12, E - 1);
  return svg;
}

std::string hit_rate_svg(const std::vector<int>& sizes, const std::vector<HitRateCurve>& curves,
                         const std::string& title) {
  static constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c",
                                             "#ff7f0e", "#9467bd", "#8c564b"};
  const int left = 60, top = 40, plot_w = 520, plot_h = 300, width = 800, height = 400;
  const double max_log = std::log2(std::max(sizes.empty() ? 1 : sizes.back(), 2));
  const double min_log = std::log2(std::max(sizes.empty() ? 1 : sizes.front(), 1));
  auto x_of = [&](int size) {
    const double span = std::max(max_log - min_log, 1e-9);
    return left + plot_w * (std::log2(std::max(size, 1)) - min_log) / span;
  };
  auto y_of = [&](double rate) { return top + plot_h * (1.0 - rate); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"20\" font-size=\"14\">{}</text>\n"
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>\n",
      width, height, left, svg_escape(title), left, top, plot_w, plot_h);
  for (int p = 0; p <= 100; p += 20)
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}%</text><line x1=\"{}\" y1=\"{:.1f}\" "
        "x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n",
        left - 4, y_of(p / 100.0) + 4, p, left, y_of(p / 100.0), left + plot_w, y_of(p / 100.0));
  for (int s : sizes)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x_of(s),
                       top + plot_h + 14, s);
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">cache size (experts per layer)</text>\n",
      left + plot_w / 2, top + plot_h + 32);
  for (size_t c = 0; c < curves.size(); ++c) {
    const char* colour = kColours[c % std::size(kColours)];
    std::string points;
    for (size_t i = 0; i < sizes.size() && i < curves[c].hit_rates.size(); ++i)
      points += fmt::format("{:.1f},{:.1f} ", x_of(sizes[i]), y_of(curves[c].hit_rates[i]));
    svg += fmt::format(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n"
        "<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n",
        points, colour, left + plot_w + 16, top + 14 + 16 * static_cast<int>(c), colour,
        svg_escape(curves[c].name));
  }
  return svg + "</svg>\n";
}

}  // namespace glmrt
