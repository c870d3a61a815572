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

}  // namespace tbcheck::model
