//===- access_summary.cc - how a run read its files, per file --------------===//
#include "analyze/access_summary.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "analyze/data/access.h"
#include "analyze/data/paths.h"
#include "analyze/file_calls.h"
#include "analyze/finding_print.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr uint64_t kPage = 4096;
// A fault or read up to this far past where the previous one ended still
// goes in order (fault-around and small gaps between reads skip a little).
constexpr uint64_t kInOrderReach = 64 << 10;
// Fewer faults and reads than this say nothing about an order.
constexpr size_t kMinForOrder = 8;
// The hint: the kernel read at least this many times what was used, of
// files with at least kHintMinUsed used, and the file it read most for was
// touched mostly out of order.
constexpr double kHintAmplification = 4;
constexpr uint64_t kHintMinUsed = 64 << 10;
constexpr double kHintOutOfOrder = 0.5;

struct WriteSpan {
  uint64_t dev = 0, ino = 0;
  int64_t start = 0, end = 0;     // ns since the command started, the call's entry and exit
  uint64_t first = 0, last = 0;   // pages written, inclusive
};

Result<std::vector<WriteSpan>> ReadWrites(Db& db, int64_t run_id) {
  auto window = ReadRunWindow(db, run_id);
  if (!window) return window.error();
  std::vector<WriteSpan> out;
  Status err = data::VisitWrites(db, run_id, [&](Stmt& st) {
    WriteSpan w;
    w.dev = st.Int(2), w.ino = st.Int(3);
    w.start = st.Int(0) - window->command_start_ns;
    w.end = w.start + st.Int(1);
    w.first = st.Int(4) / kPage;
    w.last = (st.Int(4) + st.Int(5) - 1) / kPage;
    out.push_back(w);
  });
  if (!err.ok()) return err.error();
  return out;
}

// Marks the page-cache additions a write of the same file made: the page is
// in the range the write wrote and the addition came while it ran. Both
// lists are in time order, so the writes that may cover an addition are the
// few that started before it and had not ended: one sweep.
std::vector<bool> AddedByWrites(const AccessOrder& order, const std::vector<WriteSpan>& writes) {
  std::vector<bool> out(order.touches.size(), false);
  std::vector<const WriteSpan*> active;
  size_t next = 0;
  for (size_t i = 0; i < order.touches.size(); ++i) {
    const FileTouch& t = order.touches[i];
    if (t.source != 'p') continue;
    const auto ts = static_cast<int64_t>(t.ts_ns);
    while (next < writes.size() && writes[next].start <= ts) active.push_back(&writes[next++]);
    std::erase_if(active, [&](const WriteSpan* w) { return w->end < ts; });
    const TouchedFile& f = order.files[t.file];
    const uint64_t page = t.offset / kPage;
    for (const WriteSpan* w : active)
      if (w->dev == f.dev && w->ino == f.ino && page >= w->first && page <= w->last) out[i] = true;
  }
  return out;
}

}  // namespace

Result<AccessSummary> SummarizeAccess(Db& db, int64_t run_id) {
  AccessSummary s;
  auto order = FileAccessOrder(db, run_id);
  if (!order) return order.error();
  s.order = std::move(*order);
  s.no_readahead = RecordedWithoutReadahead(db, run_id);
  auto writes = ReadWrites(db, run_id);
  if (!writes) return writes.error();
  auto sizes = data::ReadFileSizes(db, run_id);
  if (!sizes) return sizes.error();
  const std::vector<bool> written = AddedByWrites(s.order, *writes);
  struct Acc {
    FileAccess f;
    std::vector<uint64_t> used, cached;  // page numbers, with repeats until counted
    uint64_t last_end = 0;
    size_t ordered = 0, ranked = 0;
  };
  std::vector<size_t> index(s.order.files.size(), SIZE_MAX);  // file -> acc
  std::vector<Acc> acc;
  for (size_t i = 0; i < s.order.touches.size(); ++i) {
    const FileTouch& t = s.order.touches[i];
    if (t.source == 'a') continue;  // fault-around windows: mapped, not used
    if (index[t.file] == SIZE_MAX) {
      index[t.file] = acc.size();
      const TouchedFile& tf = s.order.files[t.file];
      acc.emplace_back();
      acc.back().f.path = tf.path;
      acc.back().f.dev = tf.dev;
      acc.back().f.ino = tf.ino;
      acc.back().f.first_ns = t.ts_ns;
    }
    Acc& a = acc[index[t.file]];
    a.f.touches.push_back(static_cast<uint32_t>(i));
    a.f.size = std::max(a.f.size, t.offset + t.length);
    std::vector<uint64_t>& pages = t.source == 'p' ? a.cached : a.used;
    // Pages a write added hold what the program wrote: nothing was read.
    if (!written[i])
      for (uint64_t p = t.offset / kPage; p * kPage < t.offset + t.length; ++p) pages.push_back(p);
    if (t.source == 'p') continue;
    (t.source == 'f' ? a.f.faults : a.f.reads)++;
    if (a.f.faults + a.f.reads > 1) {
      ++a.ranked;
      if (t.offset + kPage >= a.last_end && t.offset <= a.last_end + kInOrderReach) ++a.ordered;
    }
    a.last_end = t.offset + t.length;
  }
  for (Acc& a : acc) {
    // The size collect read when it first saw the file, unless the run
    // touched pages past its last one (the file grew: one it wrote); else
    // the extent touched.
    if (auto size = sizes->find({a.f.dev, a.f.ino}); size != sizes->end())
      if (a.f.size <= (size->second + kPage - 1) / kPage * kPage) a.f.size = size->second;
    auto distinct = [](std::vector<uint64_t>& v) {
      std::sort(v.begin(), v.end());
      return static_cast<uint64_t>(std::unique(v.begin(), v.end()) - v.begin());
    };
    a.f.used_pages = distinct(a.used);
    a.f.cached_pages = distinct(a.cached);
    if (a.ranked + 1 >= kMinForOrder) a.f.in_order = static_cast<double>(a.ordered) / static_cast<double>(a.ranked);
    s.files.push_back(std::move(a.f));
  }
  return s;
}

std::optional<Finding> RandomPagingFinding(const AccessSummary& s, const RunInfo& run) {
  uint64_t used = 0, cached = 0;
  for (const FileAccess& f : s.files) used += f.used_pages * kPage, cached += f.cached_pages * kPage;
  // Of the files with much used, read far beyond it and touched mostly out
  // of order, the one the kernel read most for: the title and its facts
  // speak of that one file, so each holds for it.
  const FileAccess* most = nullptr;
  for (const FileAccess& f : s.files)
    if (f.used_pages * kPage >= kHintMinUsed && f.cached_pages >= kHintAmplification * f.used_pages &&
        f.in_order >= 0 && f.in_order < kHintOutOfOrder && (!most || f.cached_pages > most->cached_pages))
      most = &f;
  if (!most) return std::nullopt;
  Finding x;
  x.kind = "random-paging";
  char buf[256];
  snprintf(buf, sizeof buf, "The kernel read %.1fx what the program used, around touches at scattered offsets",
           static_cast<double>(most->cached_pages) / static_cast<double>(most->used_pages));
  x.title = std::string(buf) + " in " + most->path.substr(most->path.rfind('/') + 1);
  snprintf(buf, sizeof buf, "%.0f%%", 100 * (1 - most->in_order));
  x.facts = {{"file", most->path},
             {"read by the kernel", FormatBytes(most->cached_pages * kPage)},
             {"used", FormatBytes(most->used_pages * kPage)},
             {"faults, reads", std::to_string(most->faults) + ", " + std::to_string(most->reads)},
             {"out of order", buf},
             {"all files", FormatBytes(cached) + " read, " + FormatBytes(used) + " used"}};
  x.count = static_cast<int64_t>(most->faults + most->reads);
  x.evidence.push_back(most->path + ": " + FormatBytes(most->cached_pages * kPage) + " read, " +
                       FormatBytes(most->used_pages * kPage) + " used, " + buf + " of its touches out of order");
  x.fix = "A cold start like this one gets faster with a prefetch plan: record one with the cache cold and readahead "
          "off (sudo syspgo collect --cold --no-readahead --probes fileio,faults,pagecache -o cold.db -- " +
          run.command + "), make it (syspgo optimize cold.db --emit plan -o app.plan), and start the program "
          "through it (syspgo prefetch app.plan -- " + run.command + ").";
  return x;
}

Result<std::string> AccessReportText(Db& db, const RunInfo& run, size_t limit, bool json) {
  auto s = SummarizeAccess(db, run.id);
  if (!s) return s.error();
  uint64_t used = 0, cached = 0;
  for (const FileAccess& f : s->files) used += f.used_pages * kPage, cached += f.cached_pages * kPage;
  std::string hint;
  if (s->no_readahead && !s->files.empty()) {
    hint = "Readahead was off while this run was recorded (collect --no-readahead), so each page the program used "
           "was read by itself: the run is ready to make a prefetch plan from (syspgo optimize " + db.path() +
           " --emit plan -o app.plan; then syspgo prefetch app.plan -- " + run.command + ").";
  } else if (auto f = RandomPagingFinding(*s, run)) {
    hint = f->title + " (" + f->evidence.front() + "). " + f->fix;
  }
  size_t shown = limit ? std::min(limit, s->files.size()) : s->files.size();
  Table t({{"#", "order", Table::Align::kRight, true},
           {"first touch", "first_touch_ns", Table::Align::kRight, true},
           {"file", "path", Table::Align::kLeft},
           {"size", "size", Table::Align::kRight, true},
           {"used", "used_bytes", Table::Align::kRight, true},
           {"kernel read", "kernel_read_bytes", Table::Align::kRight, true},
           {"faults", "faults", Table::Align::kRight, true},
           {"reads", "reads", Table::Align::kRight, true},
           {"in order", "in_order", Table::Align::kRight, true}});
  for (size_t i = 0; i < shown; ++i) {
    const FileAccess& f = s->files[i];
    char share[32] = "-", raw[32] = "null";
    if (f.in_order >= 0) {
      snprintf(share, sizeof share, "%.0f%%", 100 * f.in_order);
      snprintf(raw, sizeof raw, "%.3f", f.in_order);
    }
    t.AddRow({std::to_string(i + 1), FormatNs(static_cast<int64_t>(f.first_ns)), f.path, FormatBytes(f.size),
              FormatBytes(f.used_pages * kPage), FormatBytes(f.cached_pages * kPage), std::to_string(f.faults),
              std::to_string(f.reads), share},
             {std::to_string(i + 1), std::to_string(f.first_ns), f.path, std::to_string(f.size),
              std::to_string(f.used_pages * kPage), std::to_string(f.cached_pages * kPage), std::to_string(f.faults),
              std::to_string(f.reads), raw});
  }
  if (json) {
    nlohmann::ordered_json j = {{"run", run.id},
                                {"files_touched", s->files.size()},
                                {"used_bytes", used},
                                {"kernel_read_bytes", cached},
                                {"no_readahead", s->no_readahead},
                                {"hint", hint},
                                {"files", t.JsonRows()}};
    return JsonDocument(j);
  }
  std::string out = RunHeadline(run);
  if (s->files.empty())
    return out + "no file was faulted on, read or added to the page cache in this run (the faults, fileio\n"
                 "and pagecache probe groups record that).\n";
  out += t.Text();
  if (shown < s->files.size()) out += "(" + std::to_string(s->files.size() - shown) + " more files; --limit)\n";
  char ratio[32] = "";
  if (used) snprintf(ratio, sizeof ratio, " (%.1fx)", static_cast<double>(cached) / static_cast<double>(used));
  out += "\n" + std::to_string(s->files.size()) + " files: " + FormatBytes(used) + " used, " + FormatBytes(cached) +
         " read by the kernel for them" + ratio + "\n";
  if (!s->order.unnamed.empty())
    out += std::to_string(s->order.unnamed.size()) + " touched file(s) left out: the run never saw their path\n";
  if (!hint.empty()) out += "\n" + WrapText(TerminalSafe(hint), 0) + "\n";
  return out;
}

}  // namespace syspgo
