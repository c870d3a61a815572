// Human output that fits the terminal: say() prints text with every line fitted to report::output_width(),
// and the help formatter wraps --help pages to the same width. One facility for every command's text.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace tbcheck::cli {

// Writes `text` to standard output, each complete line fitted (report::fit_text); a line without its newline
// yet waits for the rest, so a line printed in pieces is fitted whole. --json and file contents do not go here.
void say_text(const std::string& text);
template <class... T>
void say(fmt::format_string<T...> f, T&&... args) {
  say_text(fmt::format(f, std::forward<T>(args)...));
}
// Prints a pending partial line (the end of a command, before an error message on stderr).
void say_flush();

// CLI11's formatter with every line of a help page fitted to report::output_width(): option descriptions
// continue under their column, usage and footers under their indent.
std::shared_ptr<CLI::Formatter> fitting_formatter();

}  // namespace tbcheck::cli
