// Reads the logs of nicolaswilde/thread-block-scheduling into corpus cases (the shape of the
// recordings collections): experiment headers give the kernels, "smid" lines the SM of every block.
#include "tbcheck/oracle/ntbs.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/observation.hpp"

namespace tbcheck::oracle::ntbs {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kRepository = "nicolaswilde/thread-block-scheduling";

struct KernelLine {
  int index = 0;  // i of "Ki"
  int blocks = 0, threads = 0, regs = 0, smem = 0, duration = 0, stream = 0;
  int line = 0;
};

struct SmidLine {
  int index = 0;
  std::vector<int> sms;
  int line = 0;
};

struct Experiment {
  int test = 0;
  int line = 0;  // of the "TestN" header
  std::vector<KernelLine> kernels;
  std::vector<SmidLine> smids;
};

[[noreturn]] void fail(const std::string& file, int line, const std::string& reason) {
  throw model::InputError(fmt::format("{}:{}", file, line), "", reason);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<int> to_int(std::string_view s) {
  s = trim(s);
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "K<i> smid = 0, 2, 4, " (the logger leaves a trailing separator).
SmidLine parse_smid(std::string_view body, int index, const std::string& file, int line) {
  SmidLine s{index, {}, line};
  body = trim(body);
  while (!body.empty()) {
    size_t comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    if (auto v = to_int(item); v && *v >= 0) s.sms.push_back(*v);
    else fail(file, line, fmt::format("K{} smid: '{}' is not an SM id", index, trim(item)));
    if (comma == std::string_view::npos) break;
    body = trim(body.substr(comma + 1));
  }
  if (s.sms.empty()) fail(file, line, fmt::format("K{} smid: no SM ids", index));
  return s;
}

// A number of a log line, named by its field: std::stoi would throw out_of_range (an internal error) on a
// value past int, and a value past the field's range is not a kernel the logger could have run.
int field_int(const std::string& digits, const std::string& file, int line, const std::string& field, int lo, int hi) {
  int v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size() || v < lo || v > hi)
    fail(file, line, fmt::format("{}: '{}' is not between {} and {}", field, digits.size() > 24 ? digits.substr(0, 24) + "..." : digits,
                                 lo, hi));
  return v;
}

std::vector<Experiment> scan(const std::string& text, const std::string& file) {
  static const std::regex test_header(R"(^Test(\d+) =+\s*$)");
  static const std::regex kernel_header(R"(^K(\d+) = K\(.*)");
  static const std::regex kernel_fields(
      R"(^K(\d+) = K\((\d+), (\d+), (\d+), (\d+) Bytes\), all blocks (\d+)s, +stream(\d+)\s*$)");
  static const std::regex smid_prefix(R"(^K(\d+) smid =(.*)$)");
  std::vector<Experiment> out;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    std::smatch m;
    // A smid line may be long (one entry per block): match its prefix only.
    if (raw.rfind('K', 0) == 0 && raw.find(" smid =") != std::string::npos) {
      const size_t eq = raw.find(" smid =");
      auto index = to_int(std::string_view(raw).substr(1, eq - 1));
      if (!index || *index < 0) fail(file, line, "a smid line must start with 'K<number> smid =' (a number up to 2^31-1)");
      if (out.empty()) fail(file, line, "a smid line before any 'TestN ====' header");
      out.back().smids.push_back(parse_smid(std::string_view(raw).substr(eq + 7), *index, file, line));
      continue;
    }
    if (std::regex_match(raw, m, test_header)) {
      out.push_back(Experiment{field_int(m[1].str(), file, line, "TestN", 0, 1'000'000), line, {}, {}});
      continue;
    }
    if (!out.empty() && std::regex_match(raw, m, kernel_header)) {
      // Headers of other shapes ("last block 1s, other blocks 2s") belong to experiments that
      // record no SMs; they only matter when a smid line refers to them (checked below).
      if (std::regex_match(raw, m, kernel_fields)) {
        KernelLine k;
        // The case loader checks each value against the device; these bounds only keep them in int.
        constexpr int kMax = 1 << 30;
        k.index = field_int(m[1].str(), file, line, "K<i>", 0, 1'000'000);
        const std::string kn = fmt::format("K{}", k.index);
        k.blocks = field_int(m[2].str(), file, line, kn + " blocks", 1, kMax);
        k.threads = field_int(m[3].str(), file, line, kn + " threads", 1, kMax);
        k.regs = field_int(m[4].str(), file, line, kn + " regs", 0, kMax);
        k.smem = field_int(m[5].str(), file, line, kn + " smem", 0, kMax);
        k.duration = field_int(m[6].str(), file, line, kn + " duration", 0, kMax);
        k.stream = field_int(m[7].str(), file, line, kn + " stream", 0, kMax);
        k.line = line;
        out.back().kernels.push_back(k);
      }
    }
  }
  return out;
}

// Test8 (test8/test8.cu): K1 = (N/2, 256, 128, 0), K2 = (N/2, 128, 128, 0), K3 = (1, 128, 128, 0);
// the log prints K1's parameters on all three header lines.
void correct_test8(Experiment& e, const std::string& file) {
  if (e.kernels.size() != 3) fail(file, e.line, fmt::format("Test8 should print 3 kernel lines, found {}", e.kernels.size()));
  const KernelLine k1 = e.kernels[0];
  e.kernels[1].blocks = k1.blocks;
  e.kernels[1].threads = 128;
  e.kernels[2].blocks = 1;
  e.kernels[2].threads = 128;
}

json to_case(Experiment e, const std::string& device, const std::string& display, const std::string& file) {
  if (e.test == 8) correct_test8(e, file);
  std::map<int, const KernelLine*> by_index;
  for (const auto& k : e.kernels) {
    if (by_index.count(k.index)) fail(file, k.line, fmt::format("K{} is declared twice in Test{}", k.index, e.test));
    by_index[k.index] = &k;
  }
  std::map<int, int> per_stream;
  for (const auto& k : e.kernels) ++per_stream[k.stream];
  const bool shared_streams = std::any_of(per_stream.begin(), per_stream.end(), [](auto& p) { return p.second > 1; });

  json kernels = json::array(), sm_of_block = json::object();
  std::string id = fmt::format("ntbs-{}-test{}", device, e.test);
  for (const auto& k : e.kernels) {
    json kj = {{"name", fmt::format("K{}", k.index)}, {"blocks", k.blocks}, {"threads", k.threads},
               {"regs", k.regs},  {"smem", k.smem},   {"duration", k.duration}};
    if (shared_streams) kj["stream"] = k.stream;
    kernels.push_back(kj);
    id += fmt::format("-{}", k.blocks);
  }
  for (const auto& s : e.smids) {
    auto it = by_index.find(s.index);
    if (it == by_index.end())
      fail(file, s.line, fmt::format("K{} smid: Test{} (line {}) declares no kernel K{} of the form "
                                     "'K{} = K(blocks, threads, regs, smem Bytes), all blocks Ds, streamS'",
                                     s.index, e.test, e.line, s.index, s.index));
    if (sm_of_block.contains(fmt::format("K{}", s.index)))
      fail(file, s.line, fmt::format("K{} smid: recorded twice in Test{}", s.index, e.test));
    if (static_cast<int>(s.sms.size()) != it->second->blocks)
      fail(file, s.line, fmt::format("K{} smid: {} SM ids for a kernel of {} blocks", s.index, s.sms.size(),
                                     it->second->blocks));
    sm_of_block[fmt::format("K{}", s.index)] = s.sms;
  }
  json c = {{"id", id},
            {"source", fmt::format("{} {} (Test{})", kRepository, display, e.test)},
            {"device", device},
            {"kernels", kernels},
            {"observation", {{"kind", "hardware"}, {"sm_of_block", sm_of_block}}}};
  try {
    model::case_from_json(c, fmt::format("{}:{}", file, e.line));
  } catch (const model::InputError& err) {
    fail(file, e.smids.front().line, fmt::format("Test{} is not a valid case: {}", e.test, err.reason()));
  }
  return c;
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

std::vector<json> parse_log(const std::string& text, const std::string& device, const std::string& display,
                            const std::string& file) {
  std::vector<json> cases;
  std::map<std::string, int> seen;
  for (auto& e : scan(text, file)) {
    if (e.smids.empty()) continue;
    json c = to_case(std::move(e), device, display, file);
    // A repeated experiment keeps both runs, the later ones with a run suffix.
    const std::string id = c["id"];
    if (int n = ++seen[id]; n > 1) c["id"] = fmt::format("{}-run{}", id, n);
    cases.push_back(std::move(c));
  }
  return cases;
}

Import import_clone(const std::string& clone_dir) {
  const fs::path results = fs::path(clone_dir) / "my-result";
  std::error_code ec;
  if (!fs::is_directory(clone_dir, ec))
    throw model::InputError(clone_dir, "", "no such directory (expected a clone of " + std::string(kRepository) + ")");
  if (!fs::is_directory(results, ec))
    throw model::InputError(results.string(), "", "no such directory (expected a clone of " + std::string(kRepository) + ")");
  std::vector<std::string> gpus;
  for (const auto& entry : fs::directory_iterator(results, ec))
    if (entry.is_directory()) gpus.push_back(entry.path().filename().string());
  std::sort(gpus.begin(), gpus.end());

  Import out;
  for (const auto& gpu : gpus) {
    const std::string device = lower(gpu);
    const auto& devices = model::builtin_devices();
    if (std::none_of(devices.begin(), devices.end(), [&](const model::Device& d) { return d.name == device; })) {
      out.skipped.push_back({gpu, fmt::format("no built-in device '{}'", device)});
      continue;
    }
    const fs::path log = results / gpu / (gpu + ".log");
    // The one input reader: a directory, a link loop or a FIFO is named as such.
    const std::string text = model::read_input_file(log.string(), "");
    const std::string display = "my-result/" + gpu + "/" + gpu + ".log";
    auto cases = parse_log(text, device, display, log.string());
    if (cases.empty()) throw model::InputError(log.string(), "", "no experiment with 'K<i> smid =' lines");
    Collection c{gpu, device, log.string(),
                 json{{"source", fmt::format("https://github.com/{} (public recordings)", kRepository)},
                      {"cases", cases}}};
    out.collections.push_back(std::move(c));
  }
  if (out.collections.empty())
    throw model::InputError(results.string(), "", "no GPU folder with a log of a built-in device");
  return out;
}

}  // namespace tbcheck::oracle::ntbs
