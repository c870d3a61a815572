// Retiming a CUDA-oracle recording: the model unit (20 ms by default) holds a whole wave's retirements in
// one instant, while the GPU's timer saw them apart; the finer unit keeps the order the GPU saw.
#include "tbcheck/oracle/retime.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/limits.hpp"
#include "tbcheck/oracle/cuda_host.hpp"
#include "tbcheck/oracle/oracle.hpp"

namespace tbcheck::oracle {
namespace {

std::string where_of(const model::Case& c) { return c.file.empty() ? c.id : c.file; }

// A multiplication that names the field when the product leaves its range.
int64_t scaled(int64_t v, int64_t scale, int64_t limit, const std::string& where, const std::string& field) {
  if (v != 0 && scale > limit / v)
    throw model::InputError(where, field, fmt::format("{} x {} exceeds {} in the finer unit", v, scale, limit));
  return v * scale;
}

// The ns times of one kernel's blocks (relative to the run's origin) in the new unit, rounded to nearest.
std::vector<int> times_in_unit(const model::json& ns, size_t blocks, int64_t unit_ns, const std::string& where,
                               const std::string& field, std::vector<uint64_t>& all) {
  if (!ns.is_array() || ns.size() != blocks)
    throw model::InputError(where, field, fmt::format("expected {} times, one per block", blocks));
  std::vector<int> out;
  for (size_t b = 0; b < blocks; ++b) {
    // Parsed JSON holds non-negative integers as unsigned, metadata built in memory as signed: either is a time.
    if (!ns[b].is_number_unsigned() && !(ns[b].is_number_integer() && ns[b].get<int64_t>() >= 0))
      throw model::InputError(where, fmt::format("{}[{}]", field, b),
                              "no time recorded for this block (it did not run or did not finish)");
    const uint64_t t = ns[b].get<uint64_t>();
    const int64_t u = cuda::ns_to_units(t, 0, static_cast<uint64_t>(unit_ns));
    if (u > std::numeric_limits<int>::max())
      throw model::InputError(where, fmt::format("{}[{}]", field, b),
                              fmt::format("{} ns is beyond the largest time a case holds in {} ns units", t, unit_ns));
    all.push_back(t);
    out.push_back(static_cast<int>(u));
  }
  return out;
}

// The %smid of one kernel's blocks in the device's scheduler order, as the CUDA oracle numbers them.
std::vector<int> sms_in_order(const model::json& smids, size_t blocks, const model::Device& d, const std::string& where,
                              const std::string& field) {
  if (!smids.is_array() || smids.size() != blocks)
    throw model::InputError(where, field, fmt::format("expected {} SMs, one per block", blocks));
  std::vector<int> out;
  for (size_t b = 0; b < blocks; ++b) {
    const int sm = smids[b].is_number_integer() ? cuda::scheduler_sm(d, smids[b].get<int>()) : -1;
    if (sm < 0 || sm >= d.sms)
      throw model::InputError(where, fmt::format("{}[{}]", field, b),
                              fmt::format("{} is no SM of {}", smids[b].dump(), d.name));
    out.push_back(sm);
  }
  return out;
}

}  // namespace

size_t kept_repetitions(const model::Case& c) {
  const model::json& m = c.run;
  if (m.is_null()) return 0;
  const auto raw = m.find("raw_ns");
  return raw != m.end() && raw->is_array() ? raw->size() : 0;
}

std::optional<model::InputError> retime_refusal(const model::Case& c) {
  const std::string where = where_of(c);
  const model::json& m = c.run;
  if (m.is_null())
    return model::InputError(where, "run",
                             "no run metadata: only a recording `tbcheck run --oracle cuda` wrote keeps the GPU's ns times");
  if (kept_repetitions(c) == 0)
    return model::InputError(where, "run.raw_ns",
                             "the run kept no ns times (runs before raw_ns was recorded cannot be retimed)");
  if (!c.observation || c.observation->sm_of_block.empty())
    return model::InputError(where, "observation", "the case records no SMs");
  return std::nullopt;
}

namespace {

// What every repetition of a recording shares: its metadata (read once; its time unit already the new one, as
// the retimed cases keep it) and the scale from the run's unit to the new one.
struct Run {
  model::json metadata;
  int64_t run_unit_ns = 0;
  int64_t scale = 0;
  const model::json& raw() const { return metadata["raw_ns"]; }
};

Run read_run(const model::Case& c, int64_t unit_ns) {
  const std::string where = where_of(c);
  if (unit_ns < 1) throw model::InputError("--unit-ns", "", fmt::format("{} is not a positive number of ns", unit_ns));
  if (auto refusal = retime_refusal(c)) throw *refusal;
  Run run;
  run.metadata = c.run;
  model::json& m = run.metadata;
  const auto ms = m.find("time_unit_ms");
  if (ms == m.end() || !ms->is_number() || !(ms->get<double>() > 0.0))
    throw model::InputError(where, "run.time_unit_ms", "the run's time unit is missing or not positive");
  const double run_ns = std::round(ms->get<double>() * 1e6);
  if (run_ns < 1 || run_ns > static_cast<double>(std::numeric_limits<int64_t>::max()))
    throw model::InputError(where, "run.time_unit_ms", "the run's time unit is out of range");
  run.run_unit_ns = static_cast<int64_t>(run_ns);
  if (run.run_unit_ns % unit_ns != 0)
    throw model::InputError("--unit-ns", "",
                            fmt::format("{} ns does not divide the run's time unit of {} ns ({}): durations would not "
                                        "stay whole",
                                        unit_ns, run.run_unit_ns, where));
  run.scale = run.run_unit_ns / unit_ns;
  m["time_unit_ms"] = static_cast<double>(unit_ns) / 1e6;
  return run;
}

model::Case retime_repetition(const model::Case& c, const Run& run, int64_t unit_ns, size_t repetition) {
  const std::string where = where_of(c);
  const model::json& raw = run.raw();
  if (repetition >= raw.size())
    throw model::InputError("--repetition", "",
                            fmt::format("{} keeps the ns times of {} repetition(s), not of repetition {}", where,
                                        raw.size(), repetition + 1));
  const std::string rep_field = fmt::format("run.raw_ns[{}]", repetition);
  const model::json& rep = raw[repetition];
  if (!rep.is_object() || !rep.contains("kernels") || !rep["kernels"].is_object())
    throw model::InputError(where, rep_field, "expected an object with the kernels' times");
  const int64_t scale = run.scale;

  model::Case out = c;
  out.id = repetition == 0 ? fmt::format("{}-{}ns", c.id, unit_ns) : fmt::format("{}-{}ns-rep{}", c.id, unit_ns, repetition + 1);
  out.file.clear();
  out.expect.clear();  // they were about the coarser recording
  for (size_t k = 0; k < out.scenario.kernels.size(); ++k) {
    auto& kr = out.scenario.kernels[k];
    const std::string path = fmt::format("kernels[{}]", k);
    kr.duration = static_cast<int>(scaled(kr.duration, scale, model::kMaxDurationUnits,
                                          where, path + ".duration"));
    kr.release = scaled(kr.release, scale, model::kMaxReleaseUnits, where, path + ".release_time");
  }
  model::Observation& o = *out.observation;
  const model::json& kernels = rep["kernels"];
  std::vector<uint64_t> all;
  for (const auto& k : c.scenario.kernels) {
    const std::string field = fmt::format("{}.kernels.{}", rep_field, k.name);
    const auto rk = kernels.find(k.name);
    if (rk == kernels.end() || !rk->is_object()) throw model::InputError(where, field, "missing");
    const auto n = static_cast<size_t>(k.blocks);
    o.sm_of_block[k.name] = sms_in_order(rk->value("sm", model::json()), n, c.scenario.device, where, field + ".sm");
    if (repetition == 0 && c.observation->sm_of_block.count(k.name) &&
        o.sm_of_block[k.name] != c.observation->sm_of_block.at(k.name))
      throw model::InputError(where, field + ".sm",
                              "the first repetition's SMs are not the observation's: the times would not be its times");
    o.start_of_block[k.name] = times_in_unit(rk->value("start_ns", model::json()), n, unit_ns, where, field + ".start_ns", all);
    o.end_of_block[k.name] = times_in_unit(rk->value("end_ns", model::json()), n, unit_ns, where, field + ".end_ns", all);
  }
  // Launch calls, where a case has them, are in the run's unit: scaled with the scenario.
  for (auto& [name, t] : o.launch_of_kernel) t = scaled(t, scale, model::kMaxReleaseUnits, where, "observation.launch_of_kernel");
  model::Resolution r = o.resolution.value_or(model::Resolution{});
  r.tick = cuda::timer_tick_units(all, static_cast<uint64_t>(unit_ns));
  r.launch_window = scaled(r.launch_window, scale, model::kMaxReleaseUnits, where, "observation.resolution.launch_window");
  o.resolution = r;

  out.notes = fmt::format("retimed by tbcheck retime from {} (run unit {} ns) to {} ns units, SMs and times from "
                          "repetition {} of raw_ns; {}",
                          where, run.run_unit_ns, unit_ns, repetition + 1, c.notes);
  out.run = run.metadata;
  return out;
}

}  // namespace

model::Case retime_recording(const model::Case& c, int64_t unit_ns, size_t repetition) {
  return retime_repetition(c, read_run(c, unit_ns), unit_ns, repetition);
}

std::vector<model::Case> retime_every_repetition(const model::Case& c, int64_t unit_ns) {
  const Run run = read_run(c, unit_ns);
  std::vector<model::Case> out;
  for (size_t r = 0; r < run.raw().size(); ++r) out.push_back(retime_repetition(c, run, unit_ns, r));
  return out;
}

}  // namespace tbcheck::oracle
