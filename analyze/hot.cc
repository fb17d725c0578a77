//===- hot.cc - where a run spent its CPU: functions, call edges, paths --===//
#include "analyze/hot.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "analyze/sample_db.h"
#include "analyze/symbolize.h"
#include "common/util.h"

namespace syspgo {
namespace {

struct FrameKey {
  std::string name, binary;
  auto operator<=>(const FrameKey&) const = default;
};

// The frames of a sample as people read them: innermost first, each
// location expanded into its inline chain.
std::vector<FrameKey> Expand(const Profile& p, const ProfileSample& s, std::vector<uint32_t>* binaries) {
  std::vector<FrameKey> out;
  for (uint32_t id : s.stack) {
    const Location& l = p.locations[id];
    std::string b = std::filesystem::path(p.BinaryName(l.binary)).filename().string();
    if (l.frames.empty()) {
      out.push_back({p.DisplayName(l), b});
      binaries->push_back(l.binary);
    }
    for (const SourceFrame& f : l.frames) {
      out.push_back({p.functions[f.function].display, b});
      binaries->push_back(l.binary);
    }
  }
  return out;
}

std::string Pct(uint64_t n, uint64_t of) {
  char b[16];
  snprintf(b, sizeof b, "%.1f%%", of ? 100.0 * static_cast<double>(n) / static_cast<double>(of) : 0.0);
  return b;
}

template <typename T>
void Truncate(std::vector<T>& v, size_t limit) {
  if (limit && v.size() > limit) v.resize(limit);
}

}  // namespace

HotReport BuildHotReport(const Profile& p, uint32_t binary, size_t limit) {
  HotReport r;
  std::map<FrameKey, HotFunction> fns;
  std::map<std::pair<FrameKey, FrameKey>, uint64_t> edges;
  std::map<std::vector<std::string>, uint64_t> paths;
  for (const ProfileSample& s : p.samples) {
    std::vector<uint32_t> bins;
    std::vector<FrameKey> frames = Expand(p, s, &bins);
    if (binary != kNoBinary && std::find(bins.begin(), bins.end(), binary) == bins.end()) continue;
    r.samples += s.count;
    if (s.first_user < s.stack.size() && p.locations[s.stack[s.first_user]].has_line()) r.with_line += s.count;
    auto keep = [&](size_t i) { return binary == kNoBinary || bins[i] == binary; };
    std::set<FrameKey> seen;
    for (size_t i = 0; i < frames.size(); ++i) {
      if (!keep(i) || !seen.insert(frames[i]).second) continue;
      HotFunction& f = fns[frames[i]];
      f.name = frames[i].name;
      f.binary = frames[i].binary;
      f.total += s.count;
      if (i == 0) f.self += s.count;
    }
    std::set<std::pair<FrameKey, FrameKey>> seen_edges;
    for (size_t i = 0; i + 1 < frames.size(); ++i) {
      if (!keep(i) && !keep(i + 1)) continue;
      auto e = std::make_pair(frames[i + 1], frames[i]);
      if (seen_edges.insert(e).second) edges[e] += s.count;
    }
    std::vector<std::string> path;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) path.push_back(it->name);
    paths[path] += s.count;
  }
  for (auto& [k, f] : fns) r.functions.push_back(f);
  std::stable_sort(r.functions.begin(), r.functions.end(), [](const HotFunction& a, const HotFunction& b) {
    return a.self != b.self ? a.self > b.self : a.total > b.total;
  });
  for (auto& [k, n] : edges) r.edges.push_back({k.first.name, k.second.name, n});
  std::stable_sort(r.edges.begin(), r.edges.end(), [](const HotEdge& a, const HotEdge& b) { return a.count > b.count; });
  for (auto& [k, n] : paths) r.paths.push_back({k, n});
  std::stable_sort(r.paths.begin(), r.paths.end(), [](const HotPath& a, const HotPath& b) { return a.count > b.count; });
  Truncate(r.functions, limit);
  Truncate(r.edges, limit);
  Truncate(r.paths, limit);
  for (const ProfileBinary& b : p.binaries)
    if (!b.problem.empty() && b.samples && !b.ref.path.starts_with("[")) r.problems.push_back(b.ref.path + " (" + std::to_string(b.samples) + " samples): " + b.problem);
  return r;
}

Result<HotReport> AnalyzeHot(Db& db, const HotQuery& q) {
  auto set = LoadCpuSamples(db, q.run_id);
  if (!set) return set.error();
  if (q.pid) {
    set->KeepPid(q.pid);
    if (set->samples.empty())
      return MakeError("run " + std::to_string(q.run_id) + " has no CPU samples of process " + std::to_string(q.pid) +
                       "; 'syspgo analyze " + db.path() + " hot' without --pid lists the processes' functions.");
  }
  uint32_t binary = kNoBinary;
  if (!q.binary.empty()) {
    auto b = FindBinary(*set, q.binary);
    if (!b) return b.error();
    binary = *b;
  }
  Symbolizer sym({q.debug_dirs, {}});
  Profile p = Symbolize(*set, sym);
  return BuildHotReport(p, binary, q.limit);
}

std::string HotText(const HotReport& r) {
  std::string out = std::to_string(r.samples) + " samples, " + Pct(r.with_line, r.samples) +
                    " resolved to a source line\n";
  for (const std::string& pr : r.problems) out += "WARNING: " + TerminalSafe(pr) + "\n";
  Table f({{"function", "name", Table::Align::kLeft},
           {"binary", "binary", Table::Align::kLeft},
           {"self", "self", Table::Align::kRight, true},
           {"self%", "self_pct", Table::Align::kRight},
           {"total", "total", Table::Align::kRight, true},
           {"total%", "total_pct", Table::Align::kRight}});
  for (const HotFunction& h : r.functions)
    f.AddRow({h.name, h.binary, std::to_string(h.self), Pct(h.self, r.samples), std::to_string(h.total),
              Pct(h.total, r.samples)});
  Table e({{"caller", "caller", Table::Align::kLeft},
           {"callee", "callee", Table::Align::kLeft},
           {"samples", "samples", Table::Align::kRight, true}});
  for (const HotEdge& h : r.edges) e.AddRow({h.caller, h.callee, std::to_string(h.count)});
  Table p({{"samples", "samples", Table::Align::kRight, true}, {"path (outermost first)", "path", Table::Align::kLeft}});
  for (const HotPath& h : r.paths) {
    std::string s;
    for (const std::string& fr : h.frames) s += (s.empty() ? "" : ";") + fr;
    p.AddRow({std::to_string(h.count), s});
  }
  out += "\nfunctions\n" + f.Text() + "\ncall edges\n" + e.Text() + "\nhottest paths\n" + p.Text();
  return out;
}

std::string HotJson(const HotReport& r) {
  using Json = nlohmann::ordered_json;
  Json functions = Json::array(), edges = Json::array(), paths = Json::array();
  for (const HotFunction& h : r.functions)
    functions.push_back({{"name", h.name}, {"binary", h.binary}, {"self", h.self}, {"total", h.total}});
  for (const HotEdge& h : r.edges) edges.push_back({{"caller", h.caller}, {"callee", h.callee}, {"samples", h.count}});
  for (const HotPath& h : r.paths) paths.push_back({{"samples", h.count}, {"frames", h.frames}});
  Json j = {{"samples", r.samples},           {"samples_with_line", r.with_line}, {"problems", r.problems},
            {"functions", std::move(functions)}, {"edges", std::move(edges)},          {"paths", std::move(paths)}};
  return JsonDocument(j);
}

}  // namespace syspgo
