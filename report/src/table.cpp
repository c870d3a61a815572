// Text tables, integer-list formatting and the stderr progress bar.
// Widths count UTF-8 code points so the check marks in validate tables stay aligned.
#include "tbcheck/report/table.hpp"

#include <algorithm>
#include <cstdio>
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
    size_t cut = std::string::npos, cols = 0, at = 0;
    for (; at < rest.size() && cols < width; ++at) {
      const unsigned char c = static_cast<unsigned char>(rest[at]);
      if ((c & 0xC0) != 0x80) ++cols;
      if (c == ' ' || c == '/' || c == ',') cut = at;
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

std::string Table::render() const {
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
  if (natural > 0 && total > kTableWidth) {
    // The room the fixed columns leave, shared among the wrapped ones by their natural widths.
    const size_t fixed = total - natural;
    const size_t room = kTableWidth > fixed ? kTableWidth - fixed : 0;
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
  std::string out = line(headers_);
  total = 0;
  for (size_t w : width) total += w + 2;
  out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

Progress::Progress(std::string label, size_t total)
    : label_(std::move(label)), total_(total), enabled_(total > 0 && isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (enabled_ && last_percent_ >= 0) std::fprintf(stderr, "\r\033[K");
}

void Progress::tick(size_t n) {
  done_ += n;
  draw(false);
}

void Progress::draw(bool) {
  if (!enabled_) return;
  int pct = static_cast<int>(done_ * 100 / total_);
  if (pct == last_percent_) return;
  last_percent_ = pct;
  int bar = pct * 30 / 100;
  std::fprintf(stderr, "\r%s [%s%s] %3d%% (%zu/%zu)", label_.c_str(), std::string(static_cast<size_t>(bar), '#').c_str(),
               std::string(static_cast<size_t>(30 - bar), ' ').c_str(), pct, done_, total_);
  std::fflush(stderr);
}

}  // namespace tbcheck::report
