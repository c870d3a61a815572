// Schedule helpers: makespan and the JSON shape of docs/design.md.
// Blocks are written in block-index order with start and end in model time units.
#include "tbcheck/model/schedule.hpp"

#include <algorithm>

namespace tbcheck::model {

int64_t Schedule::makespan() const {
  int64_t m = 0;
  for (const auto& k : kernels)
    for (const auto& b : k.blocks) m = std::max(m, b.end);
  return m;
}

json Schedule::to_json() const {
  json j = {{"hypothesis", hypothesis}, {"device", device}, {"kernels", json::array()}};
  for (const auto& k : kernels) {
    json blocks = json::array();
    for (const auto& b : k.blocks) blocks.push_back({{"sm", b.sm}, {"start", b.start}, {"end", b.end}});
    j["kernels"].push_back({{"name", k.name}, {"blocks", std::move(blocks)}});
  }
  return j;
}

}  // namespace tbcheck::model
