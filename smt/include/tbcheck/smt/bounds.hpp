// The plain settings of a synthesis query (term sort, parameter ranges), without Z3: what search's
// public headers and the CLI may see of smt/ (Z3's headers stay inside smt/ and search/src).
#pragma once
#include <array>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace tbcheck::smt {

// The sort of every integer term: unbounded integers, or signed bit-vectors of `kBitVecWidth` bits
// (wide enough for every byte count, register count and time the encoding forms). docs/design.md asks
// for both to be measured on the same queries; bench_distinguish does that.
enum class Sort { Int, BitVec };
std::string_view to_string(Sort);
inline constexpr unsigned kBitVecWidth = 32;

// Ranges of the symbolic kernel parameters (docs/design.md "SMT").
struct ParamBounds {
  int max_warps = 32;      // threads = 32 x warps, 1..32 warps
  int max_duration = 3;    // durations 1..D
  bool vary_regs = true;   // regs from the probe kernel's variants (24, 32, ..., 248, 255); else 32
  bool vary_smem = true;   // smem in 128-byte steps up to the device maximum; else 0
  int max_local = 0;       // local bytes per thread 0..max_local (0: local memory plays no part)
  // The controls, fixed per kernel by the structure (not variables): stream priority, TPC mask.
  std::vector<std::optional<int>> priorities;
  std::vector<std::vector<int>> tpcs;
  // Thread block clusters, fixed per kernel by the structure too (cluster_witness.cpp's structures): the
  // cluster dims and, for a 2-D cluster, the grid (x, y). Empty: no clusters.
  std::vector<std::optional<std::array<int, 3>>> clusters;
  std::vector<std::optional<std::pair<int, int>>> grids;
};

}  // namespace tbcheck::smt
