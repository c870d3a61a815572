// Plain-text tables for the human output of every command (aligned columns, UTF-8 aware).
// Kept minimal on purpose: no library in Debian does terminal tables for C++ without pulling more.
#pragma once
#include <memory>
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
  // wider than the output width; the room left by the other columns is shared among the wrapped ones.
  void wrap(size_t column) { wrap_.push_back(column); }
  size_t size() const { return rows_.size(); }
  // The table within `width` columns: as is when it fits; else its wrapped columns wrapped; else folded into
  // bands of columns that fit, each repeating the first column; else one block of "header: value" lines per row.
  std::string render(size_t width) const;
  std::string render() const;  // within output_width()

 private:
  std::string fold(const std::vector<size_t>& width, size_t max_width) const;
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> right_;
  std::vector<size_t> wrap_;
};

// The width human output is laid out for when the terminal's is not known (COLUMNS unset or unusable).
inline constexpr size_t kTableWidth = 100;

// The width human output is laid out for: COLUMNS when it is a whole number of at least 40 (narrower would
// leave no room for a label and its text), else kTableWidth. Read once per call; no terminal query (pipes
// and CI logs get the same text as a terminal of that width).
size_t output_width();

// One line of human output (no newline) within `width` columns: as is when it fits, else broken as wrap_text
// breaks, its continuation lines indented under the text that follows its label (the first run of two spaces
// or ": " in the line's first half), or 4 past its own indent when it has none.
std::vector<std::string> fit_line(const std::string& line, size_t width);
// Every line of `text` fitted (fit_line); newlines kept, a last line without one stays without one.
std::string fit_text(const std::string& text, size_t width);

// A long list within `room` columns: as many items as fit, joined by `sep`, then "... N more" and `hint`
// (" (--details shows all)", say); every item when they all fit.
std::string cut_list(const std::vector<std::string>& items, size_t room, const std::string& sep = ", ",
                     const std::string& hint = "");
// A long text list (items separated by `sep`, as one string) cut the same way.
std::string cut_list_text(const std::string& text, size_t room, const std::string& sep = ", ",
                          const std::string& hint = "");

// `text` as lines of at most `width` display columns (broken after a space, '/', ',' or '+', as composition
// names are joined; a word longer than the width is cut).
std::vector<std::string> wrap_text(const std::string& text, size_t width);

// Display width of a UTF-8 string (code points; our symbols are all single-width).
size_t display_width(const std::string& s);

// Progress of a long command on stderr: on a terminal, one live line (bar, count, an estimate of the time
// left) rewritten as work is done; otherwise, after the first 10 s, a plain line at least every 10 s (what,
// how much, elapsed, estimate), so a log or a pipe shows the command is alive. Nothing when quiet
// (`--quiet`) or when the work is done before the first line is due. tick() may come from any thread.
// A command whose work comes in stages of sizes known only as each begins (learn's steps) uses stage().
// Off a terminal the interval is 10 s, or TBCHECK_PROGRESS_SECONDS where set (a log that wants more, a test).
class Progress {
 public:
  Progress(std::string label, size_t total);
  // Staged: nothing counted until the first stage().
  explicit Progress(std::string label);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void tick(size_t n = 1);
  // What the command does now: the count restarts at 0 of `total` (0: not counted; the line then says what
  // and the time elapsed), and the estimate is of this stage's rate.
  void stage(std::string what, size_t total = 0);
  // Text after the count (what is left, or an estimate the caller makes better than a rate); "" for none.
  void note(std::string text);
  // Off for the whole process (the CLI's --quiet).
  static void set_quiet(bool quiet);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace tbcheck::report
