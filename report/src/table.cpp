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

std::string Table::render() const {
  std::vector<size_t> width(headers_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));
  };
  measure(headers_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& row) {
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
  std::string out = line(headers_);
  size_t total = 0;
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
