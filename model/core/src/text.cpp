// Text helpers: compact integer lists for SM sets in messages and tables.
// Paper-style "0, 2, ..., 80" keeps 82-SM lists readable.
#include "tbcheck/model/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tbcheck::model {

std::string format_int_list(const std::vector<int>& v) {
  if (v.size() > 4) {
    int step = v[1] - v[0];
    bool arithmetic = step != 0;
    for (size_t i = 2; i < v.size() && arithmetic; ++i) arithmetic = v[i] - v[i - 1] == step;
    if (arithmetic) return fmt::format("{}, {}, ..., {}", v[0], v[1], v.back());
  }
  return fmt::format("{}", fmt::join(v, ", "));
}

std::string unprintable_name_reason(const std::string& name) {
  for (const char ch : name)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      return fmt::format("holds the control character 0x{:02x}; a name is printed, so it may hold none",
                         static_cast<unsigned char>(ch));
  return "";
}

}  // namespace tbcheck::model
