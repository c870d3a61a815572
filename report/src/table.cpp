// Text tables, integer-list formatting and the stderr progress bar.
// Widths count UTF-8 code points so the check marks in validate tables stay aligned.
#include "tbcheck/report/table.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tbcheck::report {

std::string verdict_symbol(model::Verdict v) {
  switch (v) {
    case model::Verdict::Pass: return "✓";
    case model::Verdict::Fail: return "✗";
    case model::Verdict::Unknown: return "?";
    case model::Verdict::Unsupported: return "–";
  }
  return "?";
}


size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::vector<std::string> wrap_text(const std::string& text, size_t width) {
  width = std::max<size_t>(width, 1);
  std::vector<std::string> lines;
  std::string rest = text;
  while (display_width(rest) > width) {
    // The last break point that keeps the line within the width (bytes and code points agree for the
    // ASCII break characters; a cut inside a word counts code points).
    // A line's leading spaces (its indent) are no break point: breaking there would leave an empty line.
    size_t cut = std::string::npos, cols = 0, at = 0;
    bool in_text = false;
    for (; at < rest.size() && cols < width; ++at) {
      const unsigned char c = static_cast<unsigned char>(rest[at]);
      if ((c & 0xC0) != 0x80) ++cols;
      if (in_text && (c == ' ' || c == '/' || c == ',' || c == '+')) cut = at;
      in_text = in_text || c != ' ';
    }
    while (at < rest.size() && (static_cast<unsigned char>(rest[at]) & 0xC0) == 0x80) ++at;
    if (at < rest.size() && rest[at] == ' ') cut = at;  // the line is full exactly at a word's end
    const size_t end = cut == std::string::npos ? at : cut + 1;
    std::string line = rest.substr(0, end);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(line);
    rest = rest.substr(end);
    while (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
  }
  if (!rest.empty() || lines.empty()) lines.push_back(rest);
  return lines;
}

size_t output_width() {
  const char* c = std::getenv("COLUMNS");
  if (c == nullptr || *c == '\0') return kTableWidth;
  size_t n = 0;
  for (const char* p = c; *p; ++p) {
    if (*p < '0' || *p > '9' || n > 100000) return kTableWidth;
    n = n * 10 + static_cast<size_t>(*p - '0');
  }
  return n >= 40 ? n : kTableWidth;
}

std::vector<std::string> fit_line(const std::string& line, size_t width) {
  width = std::max<size_t>(width, 20);
  if (display_width(line) <= width) return {line};
  const size_t indent = line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ');
  // The text after a label: the first gap of two spaces (a help page's option column, an aligned list) or
  // ": " after a label of at most 32 columns, within the line's first half; a longer label reads better with
  // a plain indent. A deeply indented line (a help description under a long option name) continues at its
  // indent; others 4 past it, so the continuation is not read as the next item.
  size_t hang = indent >= 16 ? indent : indent + 4;
  const size_t half = std::min(width / 2, line.size());
  for (size_t i = indent; i + 1 < half; ++i) {
    if (line[i] == ' ' && line[i + 1] == ' ') {
      const size_t text = line.find_first_not_of(' ', i);
      if (text != std::string::npos && text < half) hang = display_width(line.substr(0, text));
      break;
    }
    if (line[i] == ':' && line[i + 1] == ' ') {
      if (i - indent <= 32) hang = display_width(line.substr(0, i + 2));
      break;
    }
  }
  if (hang + 20 > width) hang = std::min(indent + 4, width / 2);
  std::vector<std::string> out;
  // The first line takes the text up to the width; the rest wraps within the room after the hang.
  std::vector<std::string> first = wrap_text(line, width);
  out.push_back(first.front());
  std::string rest = line.substr(std::min(line.size(), first.front().size()));
  while (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
  if (!rest.empty())
    for (auto& l : wrap_text(rest, width - hang)) out.push_back(std::string(hang, ' ') + l);
  return out;
}

std::string fit_text(const std::string& text, size_t width) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    const auto lines = fit_line(line, width);
    for (size_t i = 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
    if (nl == std::string::npos) break;
    out += "\n";
    at = nl + 1;
  }
  return out;
}

std::string cut_list(const std::vector<std::string>& items, size_t room, const std::string& sep,
                     const std::string& hint) {
  std::string all;
  for (size_t i = 0; i < items.size(); ++i) all += (i ? sep : "") + items[i];
  if (display_width(all) <= room) return all;
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    // What the line would end with if this item were the last one shown.
    const std::string tail = fmt::format("{}... {} more{}", i ? sep : "", items.size() - i, hint);
    const std::string next = (i ? sep : "") + items[i];
    const std::string tail_after = fmt::format("{}... {} more{}", sep, items.size() - i - 1, hint);
    if (display_width(out) + display_width(next) + display_width(tail_after) > room) return out + tail;
    out += next;
  }
  return out;
}

std::string cut_list_text(const std::string& text, size_t room, const std::string& sep, const std::string& hint) {
  if (display_width(text) <= room || sep.empty()) return text;
  std::vector<std::string> items;
  size_t at = 0;
  while (true) {
    const size_t s = text.find(sep, at);
    items.push_back(text.substr(at, s == std::string::npos ? std::string::npos : s - at));
    if (s == std::string::npos) break;
    at = s + sep.size();
  }
  return cut_list(items, room, sep, hint);
}

std::string Table::render() const { return render(output_width()); }

std::string Table::render(size_t max_width) const {
  std::vector<size_t> width(headers_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));
  };
  measure(headers_);
  for (const auto& r : rows_) measure(r);
  auto wrapped = [&](size_t i) { return std::find(wrap_.begin(), wrap_.end(), i) != wrap_.end(); };
  size_t total = 0, natural = 0;
  for (size_t i = 0; i < width.size(); ++i) {
    total += width[i] + 2;
    if (wrapped(i)) natural += width[i];
  }
  total = total > 2 ? total - 2 : 0;
  if (natural > 0 && total > max_width) {
    // The room the fixed columns leave, shared among the wrapped ones by their natural widths.
    const size_t fixed = total - natural;
    const size_t room = max_width > fixed ? max_width - fixed : 0;
    for (size_t i = 0; i < width.size(); ++i)
      if (wrapped(i))
        width[i] = std::max<size_t>({room * width[i] / natural, 8, display_width(headers_[i])});
  }
  auto one_line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = i < row.size() ? row[i] : "";
      std::string pad(width[i] - display_width(cell), ' ');
      bool right = std::find(right_.begin(), right_.end(), i) != right_.end();
      out += right ? pad + cell : cell + (i + 1 < width.size() ? pad : "");
      if (i + 1 < width.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  // A row whose wrapped cells take several lines: the other cells on its first line only.
  auto line = [&](const std::vector<std::string>& row) {
    std::vector<std::vector<std::string>> parts(row.size());
    size_t lines = 1;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      if (wrapped(i) && display_width(row[i]) > width[i]) {
        parts[i] = wrap_text(row[i], width[i]);
        lines = std::max(lines, parts[i].size());
      }
    if (lines == 1) return one_line(row);
    std::string out;
    for (size_t l = 0; l < lines; ++l) {
      std::vector<std::string> r(row.size());
      for (size_t i = 0; i < row.size(); ++i)
        r[i] = parts[i].empty() ? (l == 0 ? row[i] : "") : (l < parts[i].size() ? parts[i][l] : "");
      out += one_line(r);
    }
    return out;
  };
  total = 0;
  for (size_t w : width) total += w + 2;
  total = total > 2 ? total - 2 : 0;
  if (total > max_width && headers_.size() > 1) return fold(width, max_width);
  std::string out = line(headers_);
  out += std::string(total, '-') + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string Table::fold(const std::vector<size_t>& width, size_t max_width) const {
  // Bands of consecutive columns that fit beside the first one, each a table of its own.
  std::vector<std::vector<size_t>> bands;
  size_t used = width[0];
  for (size_t i = 1; i < width.size(); ++i) {
    if (bands.empty() || used + 2 + width[i] > max_width) {
      bands.push_back({});
      used = width[0];
    }
    bands.back().push_back(i);
    used += 2 + width[i];
  }
  bool fits = true;
  for (const auto& b : bands) fits = fits && (b.size() > 1 || width[0] + 2 + width[b[0]] <= max_width);
  if (fits && bands.size() <= 4) {
    std::string out;
    for (size_t bi = 0; bi < bands.size(); ++bi) {
      std::vector<std::string> h = {headers_[0]};
      for (size_t i : bands[bi]) h.push_back(headers_[i]);
      Table t(h);
      for (size_t k = 0; k < bands[bi].size(); ++k) {
        const size_t i = bands[bi][k];
        if (std::find(right_.begin(), right_.end(), i) != right_.end()) t.right_align(k + 1);
        if (std::find(wrap_.begin(), wrap_.end(), i) != wrap_.end()) t.wrap(k + 1);
      }
      for (const auto& r : rows_) {
        std::vector<std::string> row = {r.empty() ? "" : r[0]};
        for (size_t i : bands[bi]) row.push_back(i < r.size() ? r[i] : "");
        t.add(row);
      }
      if (bi) out += "\n";
      out += t.render(max_width);
    }
    return out;
  }
  // Too many bands to read across, or a column too wide beside the first: one block per row, the first
  // cell as its heading, the other cells under it as "header: value" lines (fitted, long values wrapped).
  size_t label = 0;
  for (size_t i = 1; i < headers_.size(); ++i) label = std::max(label, display_width(headers_[i]));
  std::string out;
  for (size_t ri = 0; ri < rows_.size(); ++ri) {
    const auto& r = rows_[ri];
    out += fmt::format("{}{}\n", ri ? "\n" : "", r.empty() ? "" : r[0]);
    for (size_t i = 1; i < headers_.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      if (cell.empty()) continue;
      // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "  " + std::string&&.
      std::string l(2, ' ');
      l += headers_[i];
      l += ':';
      l.append(label - display_width(headers_[i]) + 1, ' ');
      l += cell;
      for (const auto& x : fit_line(l, max_width)) out += x + "\n";
    }
  }
  return out;
}

namespace {
std::atomic<bool> g_quiet{false};

std::string duration_text(double s) {
  if (s < 90) return fmt::format("{:.0f} s", s);
  if (s < 5400) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}
}  // namespace

struct Progress::State {
  std::string label;
  std::string what;  // the stage (staged progress only)
  std::string note;
  size_t total = 0;  // of the stage; 0: not counted
  bool staged = false;
  std::atomic<size_t> done{0};
  bool tty = false;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now(), stage_start = start;
  std::chrono::milliseconds every{10000};
  std::mutex m;  // guards what, note, total, stage_start and the drawing
  std::condition_variable cv;
  bool stop = false, drawn = false;
  int last_percent = -1;
  std::thread timer;

  std::string status() const {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    std::string out = what.empty() ? "" : what + ": ";
    if (total == 0) {
      out += duration_text(elapsed) + " elapsed";
    } else {
      const size_t d = std::min(done.load(), total);
      const double in_stage = std::chrono::duration<double>(now - stage_start).count();
      std::string eta = "estimating";
      if (d > 0 && d < total)
        eta = "about " + duration_text(in_stage * static_cast<double>(total - d) / static_cast<double>(d)) + " left";
      else if (d >= total) eta = "finishing";
      out += fmt::format("{}/{} ({}%), {} elapsed, {}", d, total, d * 100 / total, duration_text(elapsed), eta);
    }
    if (!note.empty()) out += "; " + note;
    return out;
  }
  // On a terminal: the live line, redrawn when the percentage moves (or by the timer, for the estimate).
  void draw_live(bool force) {
    const size_t d = total ? std::min(done.load(), total) : 0;
    const int pct = total ? static_cast<int>(d * 100 / total) : 0;
    if (pct == last_percent && !force) return;
    last_percent = pct;
    std::string bar;
    if (total) {
      const int filled = pct * 20 / 100;
      // fmt, not operator+: GCC 12 warns falsely (-Wrestrict) on "[" + std::string(...) here.
      bar = fmt::format("[{}{}] ", std::string(static_cast<size_t>(filled), '#'),
                        std::string(static_cast<size_t>(20 - filled), ' '));
    }
    std::string line = label + " " + bar + status();
    // One live line: cut to the terminal so that a redraw (\r) does not leave wrapped remains above it.
    const size_t room = output_width() - 1;
    if (display_width(line) > room) line = fit_line(line, room).front();
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    drawn = true;
  }
};

namespace {
// TBCHECK_PROGRESS_SECONDS: the interval off a terminal, for logs that want more lines and for tests.
std::chrono::milliseconds progress_interval() {
  if (const char* v = std::getenv("TBCHECK_PROGRESS_SECONDS")) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (end != v && *end == '\0' && s >= 0.01 && s <= 3600) return std::chrono::milliseconds(static_cast<long>(s * 1000));
  }
  return std::chrono::milliseconds(10000);
}
}  // namespace

Progress::Progress(std::string label, size_t total) {
  if (total == 0 || g_quiet.load()) return;
  s_ = std::make_unique<State>();
  s_->label = std::move(label);
  s_->total = total;
  s_->tty = isatty(STDERR_FILENO) != 0;
  s_->every = progress_interval();
  // The timer: the first line after the interval (10 s), then one every interval off a terminal; a redraw
  // every second on one (the estimate moves while no unit of work ends).
  s_->timer = std::thread([st = s_.get()] {
    std::unique_lock<std::mutex> lock(st->m);
    const auto every = st->tty ? std::chrono::milliseconds(1000) : st->every;
    auto next = st->start + (st->tty ? std::chrono::milliseconds(2000) : st->every);
    while (!st->cv.wait_until(lock, next, [st] { return st->stop; })) {
      if (st->tty) {
        st->draw_live(true);
      } else {
        std::fprintf(stderr, "%s: %s\n", st->label.c_str(), st->status().c_str());
        std::fflush(stderr);
      }
      next += every;
    }
  });
}

Progress::Progress(std::string label) : Progress(std::move(label), 1) {
  if (!s_) return;
  std::lock_guard<std::mutex> lock(s_->m);
  s_->staged = true;
  s_->total = 0;
}

Progress::~Progress() {
  if (!s_) return;
  {
    std::lock_guard<std::mutex> lock(s_->m);
    s_->stop = true;
    if (s_->tty && s_->drawn) std::fprintf(stderr, "\r\033[K");
  }
  s_->cv.notify_all();
  s_->timer.join();
}

void Progress::tick(size_t n) {
  if (!s_) return;
  s_->done += n;
  if (!s_->tty) return;
  std::lock_guard<std::mutex> lock(s_->m);
  if (!s_->stop && s_->total) s_->draw_live(false);
}

void Progress::stage(std::string what, size_t total) {
  if (!s_) return;
  std::lock_guard<std::mutex> lock(s_->m);
  s_->what = std::move(what);
  s_->total = total;
  s_->done = 0;
  s_->stage_start = std::chrono::steady_clock::now();
  s_->last_percent = -1;
  // On a terminal the live line is erased, and drawn again by the timer within a second: what the command
  // prints on stdout as a stage begins (learn's step reports) then starts on a line of its own.
  if (s_->tty && s_->drawn && !s_->stop) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    s_->drawn = false;
  }
}

void Progress::note(std::string text) {
  if (!s_) return;
  std::lock_guard<std::mutex> lock(s_->m);
  s_->note = std::move(text);
}

void Progress::set_quiet(bool quiet) { g_quiet = quiet; }

}  // namespace tbcheck::report
