// Plain-text tables for the human output of every command (aligned columns, UTF-8 aware).
// Kept minimal on purpose: no library in Debian does terminal tables for C++ without pulling more.
#pragma once
#include <string>
#include <vector>

#include "tbcheck/model/compare.hpp"

namespace tbcheck::report {

// The one-character mark of a verdict in tables and reports: ✓ pass, ✗ fail, ? unknown, – not applicable.
std::string verdict_symbol(model::Verdict v);

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void right_align(size_t column) { right_.push_back(column); }
  // A column whose text is wrapped onto continuation lines (at spaces, '/' or ',') when the table would be
  // wider than kTableWidth; the room left by the other columns is shared among the wrapped ones.
  void wrap(size_t column) { wrap_.push_back(column); }
  size_t size() const { return rows_.size(); }
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> right_;
  std::vector<size_t> wrap_;
};

// The width human output is laid out for: a table with a wrapped column, and wrap_text, fit in it.
inline constexpr size_t kTableWidth = 100;

// `text` as lines of at most `width` display columns (broken after a space, '/' or ','; a word longer than
// the width is cut).
std::vector<std::string> wrap_text(const std::string& text, size_t width);

// Display width of a UTF-8 string (code points; our symbols are all single-width).
size_t display_width(const std::string& s);

// A progress bar on stderr, drawn only when stderr is a terminal (never pollutes pipes or CI logs).
class Progress {
 public:
  Progress(std::string label, size_t total);
  ~Progress();
  void tick(size_t n = 1);

 private:
  void draw(bool final);
  std::string label_;
  size_t total_, done_ = 0;
  int last_percent_ = -1;
  bool enabled_;
};

}  // namespace tbcheck::report
