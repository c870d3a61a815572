// The front door of hypothesis_list.hpp: a comma list read once, each item resolved as a shipped name, `all`, a
// file or a composition name, and the names checked distinct, for every command, the Python module and the oracles.
#include "tbcheck/model/hypothesis_list.hpp"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"

namespace tbcheck::model {

namespace {

// "alg1+registers=pb+smem_ignore_below=3072": a shipped hypothesis and the changes from it, as learn and check name
// compositions (model::composition_name), so that -H takes the name learn printed. Values are read as JSON
// scalars; the name is the canonical one (a shipped hypothesis's where the options are its own).
Hypothesis composition_named(const std::string& name) {
  const std::string where = fmt::format("composition '{}'", name);
  json j = json::object();
  size_t plus = name.find('+');
  j["base"] = name.substr(0, plus);
  while (plus != std::string::npos) {
    const size_t next = name.find('+', plus + 1);
    const std::string item = name.substr(plus + 1, next == std::string::npos ? std::string::npos : next - plus - 1);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw InputError(where, "", fmt::format("'{}' is not a change of the form mechanism=value", item));
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    json v = json::parse(value, nullptr, /*allow_exceptions=*/false);
    j[key] = v.is_discarded() || v.is_object() || v.is_array() ? json(value) : v;
    plus = next;
  }
  j["name"] = name;
  Hypothesis h = hypothesis_from_json(j, where);
  h.name = composition_name(h);
  h.source = "composition";
  return h;
}

}  // namespace

std::vector<std::string> hypothesis_list_items(const std::string& spec, const std::string& flag) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= spec.size()) {
    const size_t comma = spec.find(',', pos);
    std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    if (!item.empty()) out.push_back(std::move(item));
  }
  if (out.empty()) throw InputError(flag, "", "no hypothesis given");
  return out;
}

void check_distinct_hypothesis_names(const std::vector<std::string>& names, const std::string& flag) {
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t k = i + 1; k < names.size(); ++k)
      if (names[i] == names[k]) throw InputError(flag, "", fmt::format("hypothesis '{}' is given twice", names[i]));
}

void check_distinct_hypothesis_names(const std::vector<Hypothesis>& hs, const std::string& flag) {
  std::vector<std::string> names;
  for (const auto& h : hs) names.push_back(h.name);
  check_distinct_hypothesis_names(names, flag);
}

void check_distinct_hypothesis_names(const std::vector<RangedHypothesis>& hs, const std::string& flag) {
  std::vector<std::string> names;
  for (const auto& r : hs) names.push_back(r.h.name);
  check_distinct_hypothesis_names(names, flag);
}

std::vector<Hypothesis> resolve_hypotheses(const std::string& spec, const std::string& flag) {
  std::vector<Hypothesis> out;
  for (const std::string& item : hypothesis_list_items(spec, flag)) {
    if (item == "all") {
      for (const auto& h : builtin_hypotheses()) out.push_back(h);
    } else if (const Hypothesis* h = find_builtin_hypothesis(item)) {
      out.push_back(*h);
    } else if (item.find('/') != std::string::npos || item.ends_with(".json") || std::filesystem::exists(item)) {
      out.push_back(load_hypothesis_file(item));
    } else if (item.find('+') != std::string::npos) {
      out.push_back(composition_named(item));
    } else {
      std::vector<std::string> names;
      for (const auto& b : builtin_hypotheses()) names.push_back(b.name);
      throw InputError(flag, "",
                       fmt::format("unknown hypothesis '{}'; shipped hypotheses are: {}, all, a composition name "
                                   "(alg1+registers=pb, as learn prints them) or a path to a hypothesis file",
                                   item, fmt::join(names, ", ")));
    }
  }
  check_distinct_hypothesis_names(out, flag);
  return out;
}

std::vector<RangedHypothesis> resolve_ranged_hypotheses(const std::string& spec) {
  std::vector<RangedHypothesis> out;
  for (const std::string& item : hypothesis_list_items(spec)) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(item, ec)) {
      for (auto& h : resolve_hypotheses(item)) out.push_back({std::move(h), {}});
      continue;
    }
    json j = read_json_file(item);
    RangedHypothesis r;
    if (j.is_object())
      for (const auto& o : threshold_options()) {
        const std::string key(o.key);
        if (!j.contains(key) || !(j[key].is_string() || j[key].is_object())) continue;
        std::string error;
        const auto range = threshold_range_from_json(j[key], error);
        if (!range) throw InputError(item, key, error);
        r.ranges[key] = *range;
        j[key] = range->hi;  // a point inside, so the options are read and checked as usual
      }
    if (r.ranges.empty()) {
      out.push_back({load_hypothesis_file(item), {}});
      continue;
    }
    r.h = hypothesis_from_json(j, item);
    // As load_hypothesis_file: results know a hypothesis by its name, and a shipped one has point thresholds.
    if (find_builtin_hypothesis(r.h.name))
      throw InputError(item, "name",
                       fmt::format("'{}' is the name of a shipped hypothesis; a hypothesis file with a threshold interval "
                                   "takes a name of its own",
                                   r.h.name));
    r.h.file = item;
    out.push_back(std::move(r));
  }
  check_distinct_hypothesis_names(out);
  return out;
}

}  // namespace tbcheck::model
