// Device loading and validation, and the built-in device table embedded from corpus/devices.
// Limits must be self-consistent (e.g. warps divisible among PBs) or the simulator would be wrong.
#include "tbcheck/model/device.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/builtin.hpp"
#include "tbcheck/model/device_spec.hpp"
#include "tbcheck/model/text.hpp"

namespace tbcheck::model {

std::optional<int> Device::config_at_least(int64_t bytes) const {
  for (int kb : smem_configs_kb)
    if (int64_t{kb} * 1024 >= bytes) return kb * 1024;
  return std::nullopt;
}

static const std::vector<std::string> kDeviceKeys = {
    "name", "description", "cc", "sms", "sms_per_tpc", "pbs_per_sm", "max_blocks_per_sm", "max_warps_per_sm",
    "max_threads_per_block", "regs_per_sm", "reg_alloc_unit", "max_regs_per_thread", "smem_configs_kb",
    "smem_alloc_unit", "smem_reserved_per_block", "max_smem_per_block", "gpc_of_tpc", "gpc_source",
    "smid_of_sm", "smid_source", "stream_priorities", "issue_pairs", "issue_pass", "issue_pass_from"};

int Device::cc_major() const {
  int major = 0;
  std::sscanf(cc.c_str(), "%d", &major);
  return major;
}

Device device_from_json(const json& j, const std::string& where, const std::string& path) {
  ObjectReader r(j, where, path, kDeviceKeys);
  Device d;
  d.name = r.string("name");
  if (d.name.empty()) r.fail("name", "must not be empty");
  if (auto why = unprintable_name_reason(d.name); !why.empty()) r.fail("name", why);
  d.description = r.opt_string("description").value_or("");
  d.cc = r.string("cc");
  {
    int major = 0, minor = 0;
    char extra = 0;
    if (std::sscanf(d.cc.c_str(), "%d.%d%c", &major, &minor, &extra) != 2 || major < 1 || minor < 0)
      r.fail("cc", fmt::format("'{}' is not a compute capability like \"8.6\"", d.cc));
  }
  d.sms = static_cast<int>(r.integer("sms", 1, 1024));
  d.sms_per_tpc = static_cast<int>(r.integer("sms_per_tpc", 1, 2));
  if (d.sms % d.sms_per_tpc != 0)
    r.fail("sms_per_tpc", fmt::format("{} SMs cannot be split into TPCs of {}", d.sms, d.sms_per_tpc));
  d.pbs_per_sm = static_cast<int>(r.integer("pbs_per_sm", 1, 8));
  d.max_blocks_per_sm = static_cast<int>(r.integer("max_blocks_per_sm", 1, 64));
  d.max_warps_per_sm = static_cast<int>(r.integer("max_warps_per_sm", 1, 128));
  if (d.max_warps_per_sm % d.pbs_per_sm != 0)
    r.fail("max_warps_per_sm", fmt::format("{} warps cannot be split evenly among {} processing blocks",
                                           d.max_warps_per_sm, d.pbs_per_sm));
  d.max_threads_per_block = static_cast<int>(r.integer("max_threads_per_block", kThreadsPerWarp, 2048));
  d.regs_per_sm = static_cast<int>(r.integer("regs_per_sm", 1024, 1 << 20));
  if (d.regs_per_sm % d.pbs_per_sm != 0)
    r.fail("regs_per_sm", fmt::format("{} registers cannot be split evenly among {} processing blocks", d.regs_per_sm,
                                      d.pbs_per_sm));
  d.reg_alloc_unit = static_cast<int>(r.integer("reg_alloc_unit", kThreadsPerWarp, 8192));
  if (d.reg_alloc_unit % kThreadsPerWarp != 0)
    r.fail("reg_alloc_unit", fmt::format("{} is not a whole number of registers per thread of a warp (multiple of {})",
                                         d.reg_alloc_unit, kThreadsPerWarp));
  d.max_regs_per_thread = static_cast<int>(r.integer("max_regs_per_thread", 1, 1024));
  for (int64_t kb : r.int_array("smem_configs_kb", 0, 4096)) d.smem_configs_kb.push_back(static_cast<int>(kb));
  if (d.smem_configs_kb.empty()) r.fail("smem_configs_kb", "must list at least one configuration");
  if (!std::is_sorted(d.smem_configs_kb.begin(), d.smem_configs_kb.end()) ||
      std::adjacent_find(d.smem_configs_kb.begin(), d.smem_configs_kb.end()) != d.smem_configs_kb.end())
    r.fail("smem_configs_kb", fmt::format("must be strictly ascending, found [{}]", fmt::join(d.smem_configs_kb, ", ")));
  d.smem_alloc_unit = static_cast<int>(r.integer("smem_alloc_unit", 1, 65536));
  d.smem_reserved_per_block = static_cast<int>(r.integer("smem_reserved_per_block", 0, 65536));
  d.max_smem_per_block = static_cast<int>(r.integer("max_smem_per_block", 0, 4096 * 1024));
  if (int64_t{d.max_smem_per_block} + d.smem_reserved_per_block > d.max_smem_config_bytes())
    r.fail("max_smem_per_block",
           fmt::format("{} bytes plus {} reserved exceed the largest configuration ({} KB)", d.max_smem_per_block,
                       d.smem_reserved_per_block, d.smem_configs_kb.back()));
  if (r.has("gpc_of_tpc")) {
    for (int64_t g : r.int_array("gpc_of_tpc", 0, 255)) d.gpc_of_tpc.push_back(static_cast<int>(g));
    if (static_cast<int>(d.gpc_of_tpc.size()) != d.tpcs())
      r.fail("gpc_of_tpc", fmt::format("lists {} TPCs but the device has {}", d.gpc_of_tpc.size(), d.tpcs()));
  }
  // The block-issue properties; a pass groups pair decisions, so it means nothing without pairs.
  if (r.has("issue_pairs")) d.issue_pairs = r.boolean("issue_pairs");
  d.issue_pass = static_cast<int>(r.opt_integer("issue_pass", 1, 64).value_or(1));
  d.issue_pass_from = static_cast<int>(r.opt_integer("issue_pass_from", 0, 1 << 20).value_or(0));
  if (!d.issue_pairs && (d.issue_pass != 1 || d.issue_pass_from != 0))
    r.fail(d.issue_pass != 1 ? "issue_pass" : "issue_pass_from",
           "groups pair decisions into hand-out passes, so it needs \"issue_pairs\": true");
  if (r.has("gpc_source")) {
    if (!r.has("gpc_of_tpc")) r.fail("gpc_source", "given without gpc_of_tpc");
    d.gpc_source = r.string("gpc_source");
    if (d.gpc_source.empty()) r.fail("gpc_source", "must not be empty");
  }
  if (r.has("smid_of_sm")) {
    std::vector<int> seen(static_cast<size_t>(d.sms), 0);
    for (int64_t smid : r.int_array("smid_of_sm", 0, d.sms - 1)) {
      if (seen[static_cast<size_t>(smid)]++) r.fail("smid_of_sm", fmt::format("lists %smid {} twice", smid));
      d.smid_of_sm.push_back(static_cast<int>(smid));
    }
    if (static_cast<int>(d.smid_of_sm.size()) != d.sms)
      r.fail("smid_of_sm", fmt::format("lists {} SMs but the device has {}", d.smid_of_sm.size(), d.sms));
    if (!r.has("smid_source")) r.fail("smid_source", "required with smid_of_sm: say where the order was measured");
  }
  if (r.has("smid_source")) {
    if (!r.has("smid_of_sm")) r.fail("smid_source", "given without smid_of_sm");
    d.smid_source = r.string("smid_source");
    if (d.smid_source.empty()) r.fail("smid_source", "must not be empty");
  }
  if (r.has("stream_priorities")) {
    ObjectReader p(r.require("stream_priorities"), where, r.field("stream_priorities"), {"least", "greatest", "source"});
    PriorityRange pr;
    pr.least = static_cast<int>(p.integer("least", -1024, 1024));
    pr.greatest = static_cast<int>(p.integer("greatest", -1024, 1024));
    if (pr.greatest > pr.least)
      p.fail("greatest", fmt::format("{} is a lower priority than least {} (CUDA: the highest priority is the lower "
                                     "number)",
                                     pr.greatest, pr.least));
    pr.source = p.string("source");
    if (pr.source.empty()) p.fail("source", "must not be empty");
    d.stream_priorities = pr;
  }
  return d;
}

std::string Device::architecture() const {
  int major = 0, minor = 0;
  std::sscanf(cc.c_str(), "%d.%d", &major, &minor);
  switch (major) {
    case 1: return "Tesla";
    case 2: return "Fermi";
    case 3: return "Kepler";
    case 5: return "Maxwell";
    case 6: return "Pascal";
    case 7: return minor >= 5 ? "Turing" : "Volta";
    case 8: return minor == 9 ? "Ada" : "Ampere";
    case 9: return "Hopper";
    case 10:
    case 12: return "Blackwell";
    default: return fmt::format("CC {}.x", major);
  }
}

json Device::to_json() const {
  json j = {{"name", name},
            {"cc", cc},
            {"sms", sms},
            {"sms_per_tpc", sms_per_tpc},
            {"pbs_per_sm", pbs_per_sm},
            {"max_blocks_per_sm", max_blocks_per_sm},
            {"max_warps_per_sm", max_warps_per_sm},
            {"max_threads_per_block", max_threads_per_block},
            {"regs_per_sm", regs_per_sm},
            {"reg_alloc_unit", reg_alloc_unit},
            {"max_regs_per_thread", max_regs_per_thread},
            {"smem_configs_kb", smem_configs_kb},
            {"smem_alloc_unit", smem_alloc_unit},
            {"smem_reserved_per_block", smem_reserved_per_block},
            {"max_smem_per_block", max_smem_per_block}};
  if (!description.empty()) j["description"] = description;
  if (!gpc_of_tpc.empty()) j["gpc_of_tpc"] = gpc_of_tpc;
  if (issue_pairs) {
    j["issue_pairs"] = true;
    j["issue_pass"] = issue_pass;
    j["issue_pass_from"] = issue_pass_from;
  }
  if (!gpc_source.empty()) j["gpc_source"] = gpc_source;
  if (!smid_of_sm.empty()) {
    j["smid_of_sm"] = smid_of_sm;
    j["smid_source"] = smid_source;
  }
  if (stream_priorities)
    j["stream_priorities"] = {{"least", stream_priorities->least},
                              {"greatest", stream_priorities->greatest},
                              {"source", stream_priorities->source}};
  return j;
}

const std::vector<Device>& builtin_devices() {
  static const std::vector<Device> devices = [] {
    std::vector<Device> out;
    for (const auto& f : embedded_files()) {
      if (std::string_view(f.folder) != "devices") continue;
      std::string where = fmt::format("corpus/devices/{}.json", f.name);
      Device d = device_from_json(parse_json_text(f.text, where), where, "");
      if (d.name != f.name) throw InputError(where, "name", fmt::format("'{}' differs from the file name", d.name));
      out.push_back(std::move(d));
    }
    return out;
  }();
  return devices;
}

const Device& builtin_device(const std::string& name, const std::string& where, const std::string& field) {
  std::vector<std::string> names;
  for (const auto& d : builtin_devices()) {
    if (d.name == name) return d;
    names.push_back(d.name);
  }
  throw InputError(where, field, fmt::format("unknown device '{}'; built-in devices are: {}", name, fmt::join(names, ", ")));
}

Device device_from_spec(const std::string& spec, const std::string& flag) {
  std::error_code ec;
  const bool file = std::filesystem::exists(std::filesystem::symlink_status(spec, ec)) ||
                    spec.find('/') != std::string::npos || spec.ends_with(".json");
  if (!file) return builtin_device(spec, flag, "");
  return device_from_json(read_json_file(spec), spec, "");
}

std::optional<Device> device_file_if_valid(const std::string& path) {
  try {
    return device_from_json(read_json_file(path), path, "");
  } catch (const InputError&) {  // the loader's refusal, as the answer "not a device file"
    return std::nullopt;
  }
}

bool is_builtin(const Device& d) {
  for (const auto& b : builtin_devices())
    if (b.name == d.name) return b.to_json() == d.to_json();
  return false;
}

}  // namespace tbcheck::model
