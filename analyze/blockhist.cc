//===- blockhist.cc - block latency histograms per device and direction --===//
// The histograms are read as the kernel kept them (block_latency_hist),
// not rebuilt from block_rq: the kernel counts every request it saw
// complete, while block_rq can miss completions under load.
#include "analyze/blockhist.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdio>

#include "analyze/data/block.h"
#include "analyze/run.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr size_t kBarWidth = 40;  // as biolatency draws them

}  // namespace

int Log2Slot(int64_t ns) {
  int slot = 0;
  while (ns > 1) {
    ns >>= 1;
    ++slot;
  }
  return slot;
}

std::string DevName(uint64_t dev) {
  return std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
}

std::vector<std::string> Log2Bars(const std::map<int, int64_t>& slots) {
  std::vector<std::string> out;
  int64_t most = 0;
  for (auto& [s, n] : slots) most = std::max(most, n);
  if (slots.empty() || most == 0) return out;
  int first = slots.begin()->first, last = slots.rbegin()->first;
  std::vector<std::string> ranges;
  size_t width = 0;
  for (int s = first; s <= last; ++s) {
    uint64_t lo = s == 0 ? 0 : uint64_t{1} << s, hi = uint64_t{1} << (s + 1);
    ranges.push_back(FormatNs(lo) + " -> " + FormatNs(hi));
    width = std::max(width, ranges.back().size());
  }
  out.push_back(std::string(width - 7, ' ') + "latency :    count  distribution");
  for (int s = first; s <= last; ++s) {
    auto it = slots.find(s);
    int64_t n = it == slots.end() ? 0 : it->second;
    size_t bar = static_cast<size_t>((n * static_cast<int64_t>(kBarWidth) + most - 1) / most);
    const std::string& r = ranges[static_cast<size_t>(s - first)];
    char count[32];
    snprintf(count, sizeof count, "%8lld", static_cast<long long>(n));
    out.push_back(std::string(width - r.size(), ' ') + r + " : " + count + " |" + std::string(bar, '*') +
                  std::string(kBarWidth - bar, ' ') + "|");
  }
  return out;
}

Result<std::vector<BlockHistogram>> BlockHistograms(Db& db, int64_t run_id) {
  std::vector<BlockHistogram> out;
  SYSPGO_TRY(data::VisitLatencyHistograms(db, run_id, [&](Stmt& st) {
    uint64_t dev = st.Int(0), part = st.Int(1);
    std::string op = st.Text(3);
    if (op.empty()) op = "op " + std::to_string(st.Int(2));
    if (out.empty() || out.back().dev != dev || out.back().part_dev != part || out.back().op != op)
      out.push_back({dev, part, op, {}, 0, 0});
    BlockHistogram& h = out.back();
    h.slots[static_cast<int>(st.Int(4))] += st.Int(5);
    h.count += st.Int(5);
    h.sum_ns += st.Int(6);
  }));
  if (!out.empty()) return out;

  // No histogram: say whether the block group ran at all.
  SYSPGO_TRY(RequireProbeGroup(db, run_id, "block", "block latency histogram", "block"));
  return out;  // recorded, and no request completed while it ran
}

Result<std::string> BlockReport(Db& db, const RunInfo& run, bool json) {
  auto hists = BlockHistograms(db, run.id);
  if (!hists) return hists.error();
  if (json) {
    Table t({{"dev", "dev", Table::Align::kLeft},
             {"part_dev", "part_dev", Table::Align::kLeft},
             {"op", "op", Table::Align::kLeft},
             {"slot", "slot", Table::Align::kRight, true},
             {"lo_ns", "lo_ns", Table::Align::kRight, true},
             {"hi_ns", "hi_ns", Table::Align::kRight, true},
             {"count", "count", Table::Align::kRight, true}});
    for (const BlockHistogram& h : *hists) {
      for (auto& [s, n] : h.slots) {
        int64_t lo = s == 0 ? 0 : int64_t{1} << s, hi = int64_t{1} << (s + 1);
        t.AddRow({DevName(h.dev), DevName(h.part_dev), h.op, std::to_string(s), std::to_string(lo),
                  std::to_string(hi), std::to_string(n)});
      }
    }
    return t.Json();
  }
  std::string out = RunHeadline(run);
  if (hists->empty()) return out + "no block request completed while the block group recorded.\n";
  for (const BlockHistogram& h : *hists) {
    std::string where = "disk " + DevName(h.dev);
    if (h.part_dev != h.dev) where += " (partition " + DevName(h.part_dev) + ")";
    out += "\n" + where + ", " + TerminalSafe(h.op) + ": " + std::to_string(h.count) + (h.count == 1 ? " request" : " requests") + ", average " +
           FormatNs(static_cast<uint64_t>(h.count ? h.sum_ns / h.count : 0)) + "\n";
    for (const std::string& line : Log2Bars(h.slots)) out += "  " + line + "\n";
  }
  return out;
}

}  // namespace syspgo
