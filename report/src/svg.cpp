// SVG timeline rendering: layout (legend, SM rows with sub-lanes, time axis) and the shared lane
// assignment. Plain attributes only, no CSS or web fonts, so any viewer or rsvg renders it alike.
#include "tbcheck/report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <tuple>

#include <fmt/format.h>

namespace tbcheck::report {

namespace {

// Tableau 10: distinguishable, colour-blind tolerant, and dark enough for white separators.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

// Rows stay 12 px when an SM runs one block at a time (132 SMs fit on a screen and a half), and
// grow so that no lane gets thinner than 4 px when many blocks are resident.
constexpr double kRowMin = 12, kLaneMin = 4;
// Stacked lanes read as one SM only if the gap between SMs is clearly wider than the hairline
// between lanes, so multi-lane pictures get a wider gap.
constexpr double kRowGapSingle = 2, kRowGapStacked = 4;
constexpr double kPlotW = 960, kLeft = 64, kRight = 28;
constexpr double kLegendRow = 16, kLegendSwatch = 10;
constexpr double kCharW = 6.3;  // rough advance of an 11 px sans-serif glyph, for legend flow

// Coordinates with at most two decimals keep big timelines small and diffs stable.
std::string num(double v) {
  std::string s = fmt::format("{:.2f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// 1, 2 or 5 times a power of ten, whole units only (model time is integral).
int64_t tick_step(int64_t span) {
  const double raw = static_cast<double>(span) / 10.0;
  if (raw <= 1) return 1;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) return static_cast<int64_t>(m * mag);
  return static_cast<int64_t>(10 * mag);
}

std::string kernel_details(const model::Scenario& sc, const std::string& name) {
  const int i = sc.kernel_index(name);
  if (i < 0) return name;
  const model::Kernel& k = sc.kernels[static_cast<size_t>(i)];
  return fmt::format("{}: {} blocks x {} threads, {} regs, {} B smem, duration {}", name, k.blocks, k.threads,
                     k.regs, k.smem, k.duration);
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

int timeline_rows(const model::Schedule& s, const model::Scenario& sc) {
  int rows = std::max(sc.device.sms, s.sms);
  for (const auto& k : s.kernels)
    for (const auto& b : k.blocks) rows = std::max(rows, b.sm + 1);
  return rows;
}

Lanes assign_lanes(const model::Schedule& s, int rows) {
  Lanes out;
  out.per_sm.assign(static_cast<size_t>(std::max(rows, 0)), 0);
  out.of_block.resize(s.kernels.size());
  // (start, kernel, block) per SM; sorting by start is what makes first-free-lane optimal.
  std::vector<std::vector<std::tuple<int64_t, size_t, size_t>>> by_sm(out.per_sm.size());
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    const auto& blocks = s.kernels[k].blocks;
    out.of_block[k].assign(blocks.size(), -1);
    for (size_t b = 0; b < blocks.size(); ++b)
      if (blocks[b].sm >= 0 && blocks[b].sm < rows) by_sm[static_cast<size_t>(blocks[b].sm)].emplace_back(blocks[b].start, k, b);
  }
  for (size_t sm = 0; sm < by_sm.size(); ++sm) {
    auto& list = by_sm[sm];
    std::sort(list.begin(), list.end());
    std::vector<int64_t> lane_end;  // when each lane frees up
    for (const auto& [start, k, b] : list) {
      const auto& p = s.kernels[k].blocks[b];
      size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > start) ++lane;
      if (lane == lane_end.size()) lane_end.push_back(p.end);
      lane_end[lane] = std::max(p.end, start);
      out.of_block[k][b] = static_cast<int>(lane);
    }
    out.per_sm[sm] = static_cast<int>(lane_end.size());
  }
  return out;
}

std::string render_timeline_svg(const model::Schedule& s, const model::Scenario& sc, const std::string& title) {
  const int rows = timeline_rows(s, sc);
  const Lanes lanes = assign_lanes(s, rows);
  const int64_t span = std::max<int64_t>(s.makespan(), 1);
  const double scale = kPlotW / static_cast<double>(span);
  const double plot_right = kLeft + kPlotW;

  // Legend flows left to right under the title and wraps at the plot's right edge.
  struct Entry {
    double x, y;
  };
  std::vector<Entry> legend;
  double lx = kLeft, ly = 56, widest = plot_right;
  for (const auto& k : s.kernels) {
    const double w = kLegendSwatch + 5 + kCharW * static_cast<double>(code_points(k.name)) + 18;
    if (lx > kLeft && lx + w > plot_right) {
      lx = kLeft;
      ly += kLegendRow;
    }
    legend.push_back({lx, ly});
    widest = std::max(widest, lx + w);
    lx += w;
  }
  const double legend_bottom = s.kernels.empty() ? 44 : ly + kLegendRow;

  // Row geometry: each SM row is as tall as its lanes need, never below kRowMin.
  const double plot_top = legend_bottom + 24;  // room for the top tick labels
  const bool stacked = std::any_of(lanes.per_sm.begin(), lanes.per_sm.end(), [](int n) { return n > 1; });
  const double row_gap = stacked ? kRowGapStacked : kRowGapSingle;
  std::vector<double> row_y(static_cast<size_t>(rows)), row_h(static_cast<size_t>(rows));
  double y = plot_top;
  for (size_t sm = 0; sm < row_y.size(); ++sm) {
    row_h[sm] = std::max(kRowMin, kLaneMin * lanes.per_sm[sm]);
    row_y[sm] = y;
    y += row_h[sm] + row_gap;
  }
  const double plot_bottom = rows > 0 ? y - row_gap : plot_top;
  const double width = std::ceil(std::max({widest, plot_right, kLeft + kCharW * 1.3 * static_cast<double>(code_points(title))}) + kRight);
  const double height = std::ceil(plot_bottom + 44);

  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fmt::format_to(w,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                 "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" fill=\"#222\">\n",
                 num(width), num(height));
  fmt::format_to(w, "<title>{}</title>\n", xml_escape(title));
  // Opaque background: PNG conversions and dark-mode viewers would otherwise show black text on black.
  fmt::format_to(w, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", num(width),
                 num(height));
  fmt::format_to(w, "<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", num(kLeft), xml_escape(title));
  size_t placed = 0;
  for (const auto& k : s.kernels)
    for (const auto& b : k.blocks) placed += b.sm >= 0 && b.sm < rows;
  const std::string subtitle = fmt::format("device {} \u00b7 hypothesis {} \u00b7 {} SMs \u00b7 {} blocks \u00b7 makespan {}",
                                           s.device.empty() ? sc.device.name : s.device,
                                           s.hypothesis.empty() ? "-" : s.hypothesis, rows, placed, s.makespan());
  fmt::format_to(w, "<text x=\"{}\" y=\"40\" font-size=\"11\" fill=\"#555\">{}</text>\n", num(kLeft), xml_escape(subtitle));

  fmt::format_to(w, "<g class=\"legend\" font-size=\"11\">\n");
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    const std::string& name = s.kernels[i].name;
    fmt::format_to(w,
                   "<g><title>{}</title><rect class=\"swatch\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>"
                   "<text x=\"{}\" y=\"{}\">{}</text></g>\n",
                   xml_escape(kernel_details(sc, name)), num(legend[i].x), num(legend[i].y - kLegendSwatch + 1),
                   num(kLegendSwatch), num(kLegendSwatch), kPalette[i % kPaletteSize],
                   num(legend[i].x + kLegendSwatch + 5), num(legend[i].y), xml_escape(name));
  }
  fmt::format_to(w, "</g>\n");

  // Zebra stripes and row labels: with 100+ rows the eye needs help to follow a row across.
  fmt::format_to(w, "<g class=\"rows\" font-size=\"10\" text-anchor=\"end\">\n");
  for (size_t sm = 0; sm < row_y.size(); ++sm) {
    if (sm % 2 == 1)
      fmt::format_to(w, "<rect class=\"stripe\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f2f2f2\"/>\n", num(kLeft),
                     num(row_y[sm] - row_gap / 2), num(kPlotW), num(row_h[sm] + row_gap));
    fmt::format_to(w, "<text x=\"{}\" y=\"{}\">SM {}</text>\n", num(kLeft - 6), num(row_y[sm] + row_h[sm] / 2 + 3.5), sm);
  }
  fmt::format_to(w, "</g>\n");

  // Time axis at the top and bottom: on a tall (132-SM) picture one of them is always in view.
  const int64_t step = tick_step(span);
  fmt::format_to(w, "<g class=\"axis\" font-size=\"10\" text-anchor=\"middle\" fill=\"#444\">\n");
  for (int64_t t = 0; t <= span; t += step) {
    const double x = kLeft + static_cast<double>(t) * scale;
    fmt::format_to(w, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#d0d0d0\" stroke-width=\"1\"/>\n", num(x),
                   num(plot_top - 4), num(plot_bottom + 4));
    fmt::format_to(w, "<text x=\"{0}\" y=\"{1}\">{3}</text><text x=\"{0}\" y=\"{2}\">{3}</text>\n", num(x), num(plot_top - 7),
                   num(plot_bottom + 15), t);
  }
  fmt::format_to(w, "<text x=\"{}\" y=\"{}\" font-size=\"11\">time (model units)</text>\n", num(kLeft + kPlotW / 2),
                 num(plot_bottom + 32));
  fmt::format_to(w, "</g>\n");

  fmt::format_to(w, "<g class=\"blocks\">\n");
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    const auto& ks = s.kernels[k];
    for (size_t b = 0; b < ks.blocks.size(); ++b) {
      const auto& p = ks.blocks[b];
      const int lane = lanes.of_block[k][b];
      if (lane < 0) continue;
      const auto sm = static_cast<size_t>(p.sm);
      const double lane_h = row_h[sm] / lanes.per_sm[sm];
      const double x = kLeft + static_cast<double>(p.start) * scale;
      // A block shorter than a pixel (long makespans) is still drawn one pixel wide so it shows.
      const double bw = std::max(static_cast<double>(p.end - p.start) * scale, 1.0);
      // White hairlines separate back-to-back blocks of one kernel, except where they would eat a thin bar.
      const char* stroke = bw >= 3 && lane_h >= 4 ? " stroke=\"#ffffff\" stroke-width=\"0.6\"" : "";
      fmt::format_to(w,
                     "<rect class=\"block\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}><title>{}</title></rect>\n",
                     num(x), num(row_y[sm] + lane * lane_h), num(bw), num(lane_h), kPalette[k % kPaletteSize], stroke,
                     xml_escape(fmt::format("{} block {}: SM {}, {}-{}", ks.name, b, p.sm, p.start, p.end)));
    }
  }
  fmt::format_to(w, "</g>\n</svg>\n");
  return out;
}

}  // namespace tbcheck::report
