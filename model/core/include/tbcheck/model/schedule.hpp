// A schedule: for every block of every kernel, its SM and its start and end time (model units).
// Predictions and hardware observations share this shape (docs/design.md "A schedule").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tbcheck/model/json_reader.hpp"

namespace tbcheck::model {

struct BlockPlacement {
  int sm = -1;
  int64_t start = 0;
  int64_t end = 0;
  bool operator==(const BlockPlacement&) const = default;
};

struct KernelSchedule {
  std::string name;
  std::vector<BlockPlacement> blocks;  // block-index order
};

struct Schedule {
  std::string hypothesis;
  std::string device;
  int sms = 0;
  std::vector<KernelSchedule> kernels;

  int64_t makespan() const;
  json to_json() const;
};

}  // namespace tbcheck::model
