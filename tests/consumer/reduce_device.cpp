// Links the installed search library (and through it smt, the oracle and Z3): a shipped device reduced
// to one TPC, as distinguish synthesizes on it. Prints the reduced device's SM count.
#include <iostream>

#include "tbcheck/model/device.hpp"
#include "tbcheck/search/distinguish.hpp"

int main() {
  const auto& full = tbcheck::model::builtin_device("rtx3090", "reduce_device", "device");
  std::cout << "reduced sms " << tbcheck::search::reduced_device(full, 1).sms << "\n";
  return 0;
}
