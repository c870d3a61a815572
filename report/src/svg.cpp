// SVG timeline rendering: layout (legend, folded SM rows with sub-lanes, time axis), the difference
// picture's marks, and the shared lane assignment. Plain attributes only, no CSS or web fonts, so any viewer or rsvg renders it alike.
#include "tbcheck/report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/text.hpp"
#include "tbcheck/report/controls.hpp"

namespace tbcheck::report {

namespace {

// Tableau 10: distinguishable, colour-blind tolerant, and dark enough for white separators.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

// Rows are never below 12 px (132 one-block rows fit on a screen and a half), and no lane gets
// thinner than 4 px when many blocks are resident.
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
  const std::string controls = controls_text(k);
  return fmt::format("{}: {} blocks x {} threads, {} regs, {} B smem, duration {}{}", name, k.blocks, k.threads, k.regs,
                     k.smem, k.duration, controls.empty() ? "" : "; " + controls);
}

// The legend's label of a kernel: its name, and the controls it sets in parentheses.
std::string legend_label(const model::Scenario& sc, const std::string& name) {
  const int i = sc.kernel_index(name);
  const std::string controls = i < 0 ? "" : controls_text(sc.kernels[static_cast<size_t>(i)]);
  return controls.empty() ? name : fmt::format("{} ({})", name, controls);
}

// Per schedule kernel, the SMs its TPC partition allows (empty: no partition), from the scenario by name.
std::vector<std::vector<bool>> partitions(const model::Schedule& s, const model::Scenario& sc) {
  std::vector<std::vector<bool>> out;
  for (const auto& k : s.kernels) {
    const int i = sc.kernel_index(k.name);
    out.push_back(i < 0 ? std::vector<bool>{} : allowed_sms(sc.kernels[static_cast<size_t>(i)], sc.device));
  }
  return out;
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

SmRange parse_sm_range(const std::string& text, const std::string& flag) {
  auto bad = [&](const std::string& why) { return model::InputError(flag, text, why); };
  auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 6 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw bad("expected an SM index or a range A-B of SM indices, such as 0-15");
    return std::stoi(t);
  };
  const size_t dash = text.find('-');
  SmRange r;
  r.first = number(text.substr(0, dash));
  r.last = dash == std::string::npos ? r.first : number(text.substr(dash + 1));
  if (r.last < r.first) throw bad(fmt::format("the range is empty ({} > {})", r.first, r.last));
  return r;
}

ScheduleDiff diff_schedules(const model::Schedule& a, const model::Schedule& b, bool compare_times) {
  ScheduleDiff d;
  const size_t kernels = std::max(a.kernels.size(), b.kernels.size());
  d.differs.resize(kernels);
  for (size_t k = 0; k < kernels; ++k) {
    const auto* ka = k < a.kernels.size() ? &a.kernels[k].blocks : nullptr;
    const auto* kb = k < b.kernels.size() ? &b.kernels[k].blocks : nullptr;
    const size_t n = std::max(ka ? ka->size() : 0, kb ? kb->size() : 0);
    d.differs[k].assign(n, false);
    for (size_t i = 0; i < n; ++i) {
      bool differs = !ka || !kb || i >= ka->size() || i >= kb->size();
      if (!differs) {
        const auto &p = (*ka)[i], &q = (*kb)[i];
        differs = (p.sm >= 0 && q.sm >= 0 && p.sm != q.sm) || (compare_times && (p.start != q.start || p.end != q.end));
      }
      if (!differs) continue;
      d.differs[k][i] = true;
      ++d.count;
      if (!d.first) d.first = std::make_pair(k, i);
    }
  }
  return d;
}

namespace {

// Light palette entries carry dark labels, dark ones white labels.
const char* label_colour(size_t k) {
  static constexpr bool kLight[] = {false, false, false, true, false, true, false, true, false, true};
  return kLight[k % kPaletteSize] ? "#222222" : "#ffffff";
}

// A bar on one row: the blocks of every SM of a folded run that sit in the same slot.
struct Slot {
  size_t kernel;
  int64_t start, end;
  int lane;
  int mark;  // 0 same, 1 differs, 2 the first difference
  bool operator==(const Slot& o) const {
    return kernel == o.kernel && start == o.start && end == o.end && lane == o.lane && mark == o.mark;
  }
};

struct SideRows {
  const model::Schedule* s;
  Lanes lanes;
  // [sm] -> slots sorted, and the block index of each slot on that SM.
  std::vector<std::vector<Slot>> slots;
  std::vector<std::vector<size_t>> blocks;
};

SideRows side_rows(const model::Schedule& s, int rows, const ScheduleDiff* diff) {
  SideRows r{&s, assign_lanes(s, rows), {}, {}};
  std::vector<std::vector<std::pair<Slot, size_t>>> by_sm(static_cast<size_t>(rows));
  for (size_t k = 0; k < s.kernels.size(); ++k)
    for (size_t b = 0; b < s.kernels[k].blocks.size(); ++b) {
      const int lane = r.lanes.of_block[k][b];
      if (lane < 0) continue;
      const auto& p = s.kernels[k].blocks[b];
      int mark = 0;
      if (diff && k < diff->differs.size() && b < diff->differs[k].size() && diff->differs[k][b])
        mark = diff->first == std::make_pair(k, b) ? 2 : 1;
      by_sm[static_cast<size_t>(p.sm)].push_back({{k, p.start, p.end, lane, mark}, b});
    }
  for (auto& list : by_sm) {
    std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) {
      return std::tie(x.first.lane, x.first.start, x.first.kernel, x.second) <
             std::tie(y.first.lane, y.first.start, y.first.kernel, y.second);
    });
    r.slots.emplace_back();
    r.blocks.emplace_back();
    for (const auto& [slot, b] : list) {
      r.slots.back().push_back(slot);
      r.blocks.back().push_back(b);
    }
  }
  return r;
}

std::string placement_text(const model::BlockPlacement& p) {
  return p.sm < 0 ? "not recorded" : fmt::format("SM {}, {}-{}", p.sm, p.start, p.end);
}

const model::BlockPlacement* placement(const model::Schedule& s, size_t k, size_t b) {
  return k < s.kernels.size() && b < s.kernels[k].blocks.size() ? &s.kernels[k].blocks[b] : nullptr;
}

// Rows are as tall as their lanes need; lanes shrink from kLaneMax towards kLaneMin so that the
// plot stays near kTargetPlotH, and --sms or folding is what makes a crowded device readable.
constexpr double kLaneMax = 14, kTargetPlotH = 1400;
constexpr double kPairGap = 12, kSideGap = 5;
constexpr double kLabelCharW = 6.0;  // advance of a 10 px glyph

std::string render(const std::vector<const model::Schedule*>& sides, const model::Scenario& sc, const std::string& title,
                   const TimelineOptions& o, const ScheduleDiff* diff) {
  int rows = 0;
  for (const auto* s : sides) rows = std::max(rows, timeline_rows(*s, sc));
  std::vector<SideRows> side;
  for (const auto* s : sides) side.push_back(side_rows(*s, rows, diff));
  int lo = 0, hi = rows - 1;
  if (o.sms) {
    if (o.sms->last >= rows)
      throw model::InputError("--sms", fmt::format("{}-{}", o.sms->first, o.sms->last),
                              fmt::format("the device has SMs 0-{} only", rows - 1));
    lo = o.sms->first;
    hi = o.sms->last;
  }
  const bool is_diff = sides.size() == 2;
  const bool zoomed = lo > 0 || hi < rows - 1;

  // Groups of consecutive SMs drawn as one row (per side).
  struct Group {
    int first, last;
  };
  // Partitions: each partitioned kernel marks its allowed SMs in the right margin, so SMs fold
  // together only where they are allowed alike.
  const std::vector<std::vector<bool>> allowed = partitions(*sides[0], sc);
  auto is_allowed = [&](size_t k, int sm) {
    return sm < static_cast<int>(allowed[k].size()) && allowed[k][static_cast<size_t>(sm)];
  };
  std::vector<Group> groups;
  for (int sm = lo; sm <= hi; ++sm) {
    bool same = o.fold && !groups.empty();
    for (size_t k = 0; same && k < allowed.size(); ++k)
      same = allowed[k].empty() || is_allowed(k, sm) == is_allowed(k, groups.back().first);
    for (const auto& sd : side)
      same = same && sd.slots[static_cast<size_t>(sm)] == sd.slots[static_cast<size_t>(groups.back().first)];
    if (same) groups.back().last = sm;
    else groups.push_back({sm, sm});
  }
  auto group_label = [](const Group& g) {
    return g.first == g.last ? fmt::format("SM {}", g.first)
                             : fmt::format("SM {}-{} ({} SMs, same)", g.first, g.last, g.last - g.first + 1);
  };

  // Lane height from the total number of lanes drawn.
  double total_lanes = 0;
  bool stacked = false;
  for (const auto& g : groups)
    for (const auto& sd : side) {
      const int n = sd.lanes.per_sm[static_cast<size_t>(g.first)];
      total_lanes += std::max(n, 1);
      stacked = stacked || n > 1;
    }
  const double lane_h = std::clamp(kTargetPlotH / std::max(total_lanes, 1.0), kLaneMin, kLaneMax);
  const double row_gap = is_diff ? kPairGap : stacked ? kRowGapStacked : kRowGapSingle;

  // Left columns: SM labels, then (difference pictures) which schedule a row shows.
  double label_w = 0, tag_w = 0;
  for (const auto& g : groups) label_w = std::max(label_w, kLabelCharW * static_cast<double>(code_points(group_label(g))));
  if (is_diff)
    for (const auto* s : sides) tag_w = std::max(tag_w, kLabelCharW * static_cast<double>(code_points(s->hypothesis)) + 10);
  const double left = std::max(kLeft, label_w + tag_w + 14);
  size_t partitioned = 0;
  for (const auto& a : allowed) partitioned += !a.empty();
  const double right = (is_diff ? 96 : kRight) + 6 * static_cast<double>(partitioned);
  const double plot_right = left + kPlotW;

  int64_t span = 1;
  for (const auto* s : sides) span = std::max(span, s->makespan());
  const double scale = kPlotW / static_cast<double>(span);

  // Header lines: title, subtitle, and for a difference picture what differs.
  const model::Schedule& s0 = *sides[0];
  size_t placed = 0;
  for (const auto& k : s0.kernels)
    for (const auto& b : k.blocks) placed += b.sm >= 0 && b.sm < rows;
  std::string hyps;
  for (size_t i = 0; i < sides.size(); ++i)
    hyps += (i ? " vs " : "") + (sides[i]->hypothesis.empty() ? std::string("-") : sides[i]->hypothesis);
  std::string subtitle = fmt::format("device {} \u00b7 {} {} \u00b7 {} \u00b7 {} blocks \u00b7 makespan {}",
                                     s0.device.empty() ? sc.device.name : s0.device, is_diff ? "schedules" : "hypothesis",
                                     hyps, zoomed ? fmt::format("SMs {}-{} of {}", lo, hi, rows) : fmt::format("{} SMs", rows),
                                     placed, s0.makespan());
  if (is_diff) subtitle += fmt::format(" vs {}", sides[1]->makespan());
  std::vector<std::pair<std::string, const char*>> notes;  // extra header lines and their colour
  if (diff) {
    if (!diff->first) {
      notes.push_back({"no block differs", "#555"});
    } else {
      const auto [k, b] = *diff->first;
      const auto* pa = placement(*sides[0], k, b);
      const auto* pb = placement(*sides[1], k, b);
      const std::string kname = k < sc.kernels.size() ? sc.kernels[k].name : fmt::format("kernel {}", k);
      notes.push_back({fmt::format("{} of {} blocks differ (outlined; the rest faded)", diff->count, placed), "#222"});
      std::string first = fmt::format("first difference (red): {} block {}: {} {}, {} {}", kname, b, sides[0]->hypothesis,
                                      pa ? placement_text(*pa) : "absent", sides[1]->hypothesis, pb ? placement_text(*pb) : "absent");
      auto shown = [&](const model::BlockPlacement* p) { return p && p->sm >= lo && p->sm <= hi; };
      if (!shown(pa) && !shown(pb)) first += " (outside the SMs shown)";
      notes.push_back({first, "#c00000"});
    }
  }

  // Legend flows left to right under the header and wraps at the plot's right edge.
  struct Entry {
    double x, y;
  };
  std::vector<Entry> legend;
  const double header_bottom = 40 + 15 * static_cast<double>(notes.size());
  double lx = left, ly = header_bottom + 16, widest = plot_right;
  for (const auto& k : s0.kernels) {
    const double w = kLegendSwatch + 5 + kCharW * static_cast<double>(code_points(legend_label(sc, k.name))) + 18;
    if (lx > left && lx + w > plot_right) {
      lx = left;
      ly += kLegendRow;
    }
    legend.push_back({lx, ly});
    widest = std::max(widest, lx + w);
    lx += w;
  }
  const double legend_bottom = s0.kernels.empty() ? header_bottom + 4 : ly + kLegendRow;

  // Row geometry: a row per group per side, each as tall as its lanes need and never below kRowMin.
  const double plot_top = legend_bottom + 24;  // room for the top tick labels
  struct Row {
    size_t group, side;
    double y, h;
  };
  std::vector<Row> row_list;
  double y = plot_top;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t i = 0; i < side.size(); ++i) {
      const int n = side[i].lanes.per_sm[static_cast<size_t>(groups[g].first)];
      const double h = std::max(kRowMin, lane_h * n);
      row_list.push_back({g, i, y, h});
      y += h + (i + 1 < side.size() ? kSideGap : row_gap);
    }
  }
  const double plot_bottom = row_list.empty() ? plot_top : y - row_gap;
  double title_w = kLeft + kCharW * 1.3 * static_cast<double>(code_points(title));
  title_w = std::max(title_w, left + kCharW * static_cast<double>(code_points(subtitle)));
  for (const auto& [text, colour] : notes) title_w = std::max(title_w, left + kCharW * static_cast<double>(code_points(text)));
  const double width = std::ceil(std::max({widest, plot_right, title_w}) + right);
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
  fmt::format_to(w, "<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", num(left), xml_escape(title));
  fmt::format_to(w, "<text x=\"{}\" y=\"40\" font-size=\"11\" fill=\"#555\">{}</text>\n", num(left), xml_escape(subtitle));
  for (size_t i = 0; i < notes.size(); ++i)
    fmt::format_to(w, "<text class=\"note\" x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{}\">{}</text>\n", num(left),
                   num(55 + 15 * static_cast<double>(i)), notes[i].second, xml_escape(notes[i].first));

  fmt::format_to(w, "<g class=\"legend\" font-size=\"11\">\n");
  for (size_t i = 0; i < s0.kernels.size(); ++i) {
    const std::string& name = s0.kernels[i].name;
    fmt::format_to(w,
                   "<g><title>{}</title><rect class=\"swatch\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>"
                   "<text x=\"{}\" y=\"{}\">{}</text></g>\n",
                   xml_escape(kernel_details(sc, name)), num(legend[i].x), num(legend[i].y - kLegendSwatch + 1),
                   num(kLegendSwatch), num(kLegendSwatch), kPalette[i % kPaletteSize],
                   num(legend[i].x + kLegendSwatch + 5), num(legend[i].y), xml_escape(legend_label(sc, name)));
  }
  fmt::format_to(w, "</g>\n");

  // Zebra stripes per group and row labels: the eye needs help to follow a row across.
  fmt::format_to(w, "<g class=\"rows\" font-size=\"10\" text-anchor=\"end\">\n");
  for (size_t g = 0; g < groups.size(); ++g) {
    double top = 1e18, bottom = 0;
    for (const auto& r : row_list)
      if (r.group == g) {
        top = std::min(top, r.y);
        bottom = std::max(bottom, r.y + r.h);
      }
    if (g % 2 == 1)
      fmt::format_to(w, "<rect class=\"stripe\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f2f2f2\"/>\n", num(left),
                     num(top - row_gap / 2), num(kPlotW), num(bottom - top + row_gap));
    fmt::format_to(w, "<text x=\"{}\" y=\"{}\">{}</text>\n", num(left - 8 - tag_w), num((top + bottom) / 2 + 3.5),
                   xml_escape(group_label(groups[g])));
  }
  // A dashed rule between the two schedules of one SM row.
  for (const auto& r : row_list)
    if (is_diff && r.side == 1)
      fmt::format_to(w, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#999\" stroke-width=\"0.8\" stroke-dasharray=\"4 3\"/>\n",
                     num(left - tag_w - 2), num(r.y - kSideGap / 2), num(plot_right));
  if (is_diff)
    for (const auto& r : row_list)
      fmt::format_to(w, "<text class=\"tag\" x=\"{}\" y=\"{}\" fill=\"#666\">{}</text>\n", num(left - 6), num(r.y + r.h / 2 + 3.5),
                     xml_escape(sides[r.side]->hypothesis));
  fmt::format_to(w, "</g>\n");

  // Time axis at the top and bottom: on a tall picture one of them is always in view.
  const int64_t step = tick_step(span);
  fmt::format_to(w, "<g class=\"axis\" font-size=\"10\" text-anchor=\"middle\" fill=\"#444\">\n");
  for (int64_t t = 0; t <= span; t += step) {
    const double x = left + static_cast<double>(t) * scale;
    fmt::format_to(w, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#d0d0d0\" stroke-width=\"1\"/>\n", num(x),
                   num(plot_top - 4), num(plot_bottom + 4));
    fmt::format_to(w, "<text x=\"{0}\" y=\"{1}\">{3}</text><text x=\"{0}\" y=\"{2}\">{3}</text>\n", num(x), num(plot_top - 7),
                   num(plot_bottom + 15), t);
  }
  fmt::format_to(w, "<text x=\"{}\" y=\"{}\" font-size=\"11\">time (model units)</text>\n", num(left + kPlotW / 2),
                 num(plot_bottom + 32));
  fmt::format_to(w, "</g>\n");

  // Bars; marked ones after the rest so their outlines are never covered, the first difference last.
  const bool fade = diff && diff->count > 0;
  struct Box {
    double x0, y0, x1, y1;
  };
  std::map<std::tuple<size_t, size_t, size_t>, Box> box_of;  // (side, kernel, block) -> its bar
  std::string marked[3];
  std::vector<double> first_rows;  // y centres of the rows that hold the first difference
  for (const auto& r : row_list) {
    const SideRows& sd = side[r.side];
    const Group& g = groups[r.group];
    const auto& slots = sd.slots[static_cast<size_t>(g.first)];
    const int n = sd.lanes.per_sm[static_cast<size_t>(g.first)];
    const double lh = n > 0 ? r.h / n : r.h;
    for (size_t i = 0; i < slots.size(); ++i) {
      const Slot& sl = slots[i];
      const std::string& kname = sd.s->kernels[sl.kernel].name;
      std::vector<int> blocks;
      for (int sm = g.first; sm <= g.last; ++sm) blocks.push_back(static_cast<int>(sd.blocks[static_cast<size_t>(sm)][i]));
      std::string tip = blocks.size() == 1
                            ? fmt::format("{} block {}: SM {}, {}-{}", kname, blocks[0], g.first, sl.start, sl.end)
                            : fmt::format("{} blocks {}: SMs {}-{}, {}-{}", kname, model::format_int_list(blocks), g.first,
                                          g.last, sl.start, sl.end);
      if (sl.mark && blocks.size() == 1) {
        const auto* other = placement(*sides[1 - r.side], sl.kernel, static_cast<size_t>(blocks[0]));
        tip += fmt::format(" (differs: {} {})", sides[1 - r.side]->hypothesis, other ? placement_text(*other) : "absent");
      } else if (sl.mark) {
        tip += " (differ)";
      }
      const double x = left + static_cast<double>(sl.start) * scale;
      // A block shorter than a pixel (long makespans) is still drawn one pixel wide so it shows.
      const double bw = std::max(static_cast<double>(sl.end - sl.start) * scale, 1.0);
      const double by = r.y + sl.lane * lh;
      std::string attrs;
      if (sl.mark == 2) attrs = " stroke=\"#d00000\" stroke-width=\"2.5\" data-diff=\"first\"";
      else if (sl.mark == 1) attrs = " stroke=\"#111111\" stroke-width=\"1.2\" data-diff=\"differs\"";
      // White hairlines separate back-to-back blocks of one kernel, except where they would eat a thin bar.
      else if (bw >= 3 && lh >= 4) attrs = " stroke=\"#ffffff\" stroke-width=\"0.6\"";
      if (fade && !sl.mark) attrs += " fill-opacity=\"0.3\"";
      std::string bar = fmt::format("<rect class=\"block\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}><title>{}</title></rect>\n",
                                    num(x), num(by), num(bw), num(lh), kPalette[sl.kernel % kPaletteSize], attrs,
                                    xml_escape(tip));
      // The kernel's name inside a bar wide and tall enough to hold it.
      const double fs = std::min(10.0, lh - 2);
      const double text_w = 0.62 * fs * static_cast<double>(code_points(kname));
      if (fs >= 7 && bw >= text_w + 6)
        bar += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\"{} pointer-events=\"none\">{}</text>\n",
                           num(x + 3), num(by + lh / 2 + fs * 0.36), num(fs),
                           fade && !sl.mark ? "#333333" : label_colour(sl.kernel),
                           fade && !sl.mark ? " fill-opacity=\"0.7\"" : "", xml_escape(kname));
      for (int blk : blocks) box_of[{r.side, sl.kernel, static_cast<size_t>(blk)}] = {x, by, x + bw, by + lh};
      if (sl.mark == 2) first_rows.push_back(by + lh / 2);
      marked[sl.mark] += bar;
    }
  }
  fmt::format_to(w, "<g class=\"blocks\">\n{}{}{}</g>\n", marked[0], marked[1], marked[2]);
  // Clusters: a dashed outline around the bars of each cluster's blocks.
  fmt::format_to(w, "<g class=\"clusters\" fill=\"none\" stroke=\"#111111\" stroke-width=\"1.2\" stroke-dasharray=\"3 2\">\n");
  for (size_t sd = 0; sd < sides.size(); ++sd)
    for (size_t k = 0; k < sides[sd]->kernels.size(); ++k) {
      const int ki = sc.kernel_index(sides[sd]->kernels[k].name);
      if (ki < 0 || !sc.kernels[static_cast<size_t>(ki)].cluster) continue;
      const std::vector<int> id = model::cluster_of_blocks(sc.kernels[static_cast<size_t>(ki)]);
      std::map<int, std::pair<Box, std::vector<int>>> outline;
      for (size_t b = 0; b < id.size(); ++b) {
        auto it = box_of.find({sd, k, b});
        if (it == box_of.end()) continue;
        auto [o2, fresh] = outline.try_emplace(id[b], it->second, std::vector<int>{});
        Box& u = o2->second.first;
        u = {std::min(u.x0, it->second.x0), std::min(u.y0, it->second.y0), std::max(u.x1, it->second.x1),
             std::max(u.y1, it->second.y1)};
        o2->second.second.push_back(static_cast<int>(b));
      }
      for (const auto& [c, ub] : outline)
        fmt::format_to(w, "<rect class=\"cluster\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>\n",
                       num(ub.first.x0 - 1), num(ub.first.y0 - 1), num(ub.first.x1 - ub.first.x0 + 2),
                       num(ub.first.y1 - ub.first.y0 + 2),
                       xml_escape(fmt::format("{} cluster {}: blocks {}", sides[sd]->kernels[k].name, c,
                                              model::format_int_list(ub.second))));
    }
  fmt::format_to(w, "</g>\n");
  // Partitions: per partitioned kernel, a strip of its colour right of the plot on every allowed SM's row.
  if (partitioned > 0) {
    fmt::format_to(w, "<g class=\"partitions\">\n");
    size_t column = 0;
    for (size_t k = 0; k < allowed.size(); ++k) {
      if (allowed[k].empty()) continue;
      const double px = plot_right + 3 + 6 * static_cast<double>(column++);
      for (const auto& r : row_list)
        if (is_allowed(k, groups[r.group].first))
          fmt::format_to(w, "<rect class=\"partition\" x=\"{}\" y=\"{}\" width=\"4\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
                         num(px), num(r.y), num(r.h), kPalette[k % kPaletteSize],
                         xml_escape(fmt::format("{} may use this SM ({})", sides[0]->kernels[k].name,
                                                group_label(groups[r.group]))));
    }
    fmt::format_to(w, "</g>\n");
  }
  // A pointer in the right margin, on each row that holds the first difference.
  for (double cy : first_rows)
    fmt::format_to(w, "<text class=\"first-difference\" x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#d00000\">\u25c0 first</text>\n",
                   num(plot_right + 6), num(cy + 4));
  fmt::format_to(w, "</svg>\n");
  return out;
}

}  // namespace

std::string render_timeline_svg(const model::Schedule& s, const model::Scenario& sc, const std::string& title,
                                const TimelineOptions& o) {
  return render({&s}, sc, title, o, nullptr);
}

std::string render_diff_svg(const model::Schedule& a, const model::Schedule& b, const model::Scenario& sc,
                            const std::string& title, const TimelineOptions& o, bool compare_times) {
  const ScheduleDiff d = diff_schedules(a, b, compare_times);
  return render({&a, &b}, sc, title, o, &d);
}

}  // namespace tbcheck::report
