// Thread block clusters: a cluster is dispatched whole onto the SMs of one GPC; the
// options cluster_gpc and cluster_spread choose the GPC and the SMs. Shared by the simulator and the SMT encoder.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"

namespace tbcheck::model {

bool has_clusters(const Scenario& s);

// The GPC of every SM from the device's gpc_of_tpc; empty when the device has no map (never guessed).
std::vector<int> cluster_gpc_of_sm(const Device& d);
int gpc_count(const std::vector<int>& gpc_of_sm);

// "kernels[i].cluster: <reason>" when a clustered scenario has no GPC map to place clusters by; "" otherwise.
std::string cluster_no_gpc_map(const Scenario& s);
// "kernels[i].cluster: <reason>" when the cluster rule is not defined for h on s; "" otherwise.
// A cluster fits a GPC when the GPC's room (the sum of its SMs' capacities in blocks) holds all its blocks,
// which is exact when a block takes one block of room on its own SM and nothing elsewhere; the resource
// options are checked for that by cluster_room_additivity (testing/include/tbcheck/testing/cluster_additivity.hpp). Refused: gpc-priority
// (Fermi's dispatcher) and a clustered kernel that would lead block pairs under paired issue.
std::string cluster_unsupported(const Scenario& s, const Hypothesis& h);
// The options of h the cluster rule is not defined for on any scenario ("selection gpc-priority"); "" when none.
std::string cluster_unsupported_options(const Hypothesis& h);
// Why kernel k (clustered) can never run: no GPC of empty SMs holds one cluster; "" when one does.
std::string cluster_never_fits(const Kernel& k, const Device& d, const Hypothesis& h);

// The block index of each placement of a kernel, in placement order: clusters in cluster-id order, a
// cluster's blocks by rank (x fastest). Empty when that is the identity (1-D grids, or no cluster).
std::vector<int> cluster_block_order(int blocks, const std::optional<std::pair<int, int>>& grid,
                                     const std::optional<std::array<int, 3>>& cluster);

// The SMs of every GPC, each list in the hypothesis' SM order `order`.
std::vector<std::vector<int>> gpc_sms_in_order(const std::vector<int>& gpc_of_sm, const std::vector<int>& order);
// The GPC that takes a cluster of `size` blocks given every GPC's room (the sum of its SMs' capacities in
// blocks) now; -1 when none has room for the whole cluster.
int choose_cluster_gpc(const Hypothesis& h, const std::vector<int64_t>& room, int size);
// The SM that takes the cluster's next block: `sms` the chosen GPC's SMs in the hypothesis' order, `pos_of`
// each SM's position in that order, `blocks` every SM's capacity in blocks now (room), `value` its capacity
// in the hypothesis' units (most-room ranks by it; equal to `blocks` under capacity blocks), `on_sm` the
// blocks of this cluster per SM so far, `rr_pointer` the round-robin pointer (a position). -1 when no SM of
// the GPC has room.
int choose_cluster_sm(const Hypothesis& h, const std::vector<int>& sms, const std::vector<int>& pos_of,
                      const std::vector<int64_t>& blocks, const std::vector<int64_t>& value, const std::vector<int>& on_sm,
                      int rr_pointer);

}  // namespace tbcheck::model
