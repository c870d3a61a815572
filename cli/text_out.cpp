// say() and the fitting help formatter (text_out.hpp): the CLI's one place where text meets the terminal width.
// Lines are fitted by report::fit_line so tables, lists and help pages share one rule.
#include "text_out.hpp"

#include <cstdio>

#include "tbcheck/report/table.hpp"

namespace tbcheck::cli {
namespace {

std::string& pending() {
  static std::string p;
  return p;
}

class FittingFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    return report::fit_text(CLI::Formatter::make_help(app, std::move(name), mode), report::output_width());
  }
};

}  // namespace

void say_text(const std::string& text) {
  std::string& p = pending();
  p += text;
  const size_t last = p.rfind('\n');
  if (last == std::string::npos) return;
  const std::string out = report::fit_text(p.substr(0, last + 1), report::output_width());
  std::fwrite(out.data(), 1, out.size(), stdout);
  p.erase(0, last + 1);
}

void say_flush() {
  std::string& p = pending();
  if (p.empty()) return;
  const std::string out = report::fit_text(p, report::output_width());
  std::fwrite(out.data(), 1, out.size(), stdout);
  p.clear();
}

std::shared_ptr<CLI::Formatter> fitting_formatter() {
  auto f = std::make_shared<FittingFormatter>();
  // The option column: wide enough for most "--flag TYPE" names, narrow enough to leave the descriptions room.
  f->column_width(std::min<size_t>(34, report::output_width() / 3));
  return f;
}

}  // namespace tbcheck::cli
