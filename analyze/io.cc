//===- io.cc - synchronous file operations slower than a threshold -------===//
// The slow calls are selected in SQL (few rows); the thread's name is the
// one it had at the call, else its process's (analyze/data/tasks.h).
#include "analyze/io.h"

#include <cstdio>

#include "analyze/data/file_calls.h"
#include "analyze/file_calls.h"
#include "analyze/file_paths.h"
#include "analyze/run.h"
#include "analyze/data/tasks.h"
#include "common/util.h"

namespace syspgo {
namespace {

char Direction(int64_t nr) { return IsReadCall(nr) ? 'R' : IsSyncCall(nr) ? 'S' : 'W'; }

std::string KindLabel(int64_t kind, uint64_t ino) {
  switch (kind & SYSPGO_S_IFMT) {
    case SYSPGO_S_IFIFO: return "pipe:[" + std::to_string(ino) + "]";
    case SYSPGO_S_IFSOCK: return "socket:[" + std::to_string(ino) + "]";
    case SYSPGO_S_IFCHR: return "device:[" + std::to_string(ino) + "]";
  }
  return "inode " + std::to_string(ino);
}

}  // namespace

Result<std::vector<SlowOp>> SlowOps(Db& db, const IoQuery& q) {
  auto window = ReadRunWindow(db, q.run_id);
  if (!window) return window.error();
  auto paths = FilePaths::Load(db, q.run_id);
  if (!paths) return paths.error();
  auto tasks = Tasks::Load(db, q.run_id);
  if (!tasks) return tasks.error();
  std::vector<SlowOp> out;
  SYSPGO_TRY(data::VisitSlowFileIo(db, q.run_id, q.slower_ns, q.all_kinds, [&](Stmt& row) {
    SlowOp op;
    op.ts = row.Int(0);
    op.since_start = op.ts - window->command_start_ns;
    op.pid = row.Int(1);
    op.tid = row.Int(2);
    op.dir = Direction(row.Int(3));
    op.syscall = row.Text(4);
    uint64_t dev = row.Int(5), ino = row.Int(6);
    op.file = dev ? paths->At(dev, ino, op.ts) : "";
    if (op.file.empty()) op.file = dev ? KindLabel(row.Int(7), ino) : "(fd not open)";
    op.offset = row.Int(8);
    op.bytes = row.Int(9);
    op.latency_ns = row.Int(10);
    op.comm = tasks->Name(op.tid, op.pid, op.ts);
    out.push_back(std::move(op));
    return !(q.limit && out.size() >= q.limit);
  }));
  return out;
}

Result<std::string> IoReport(Db& db, const RunInfo& run, const IoQuery& q, bool json) {
  auto ops = SlowOps(db, q);
  if (!ops) return ops.error();
  Table t({{"time(s)", "time_ns", Table::Align::kRight, true},
           {"comm", "comm", Table::Align::kLeft},
           {"pid", "pid", Table::Align::kRight, true},
           {"tid", "tid", Table::Align::kRight, true},
           {"D", "dir", Table::Align::kLeft},
           {"syscall", "syscall", Table::Align::kLeft},
           {"bytes", "bytes", Table::Align::kRight, true},
           {"offset", "offset", Table::Align::kRight, true},
           {"latency", "latency_ns", Table::Align::kRight, true},
           {"file", "file", Table::Align::kLeft}});
  for (const SlowOp& op : *ops) {
    char when[32];
    snprintf(when, sizeof when, "%.6f", op.since_start / 1e9);
    std::string bytes = op.bytes < 0 ? "error " + std::to_string(-op.bytes)
                        : op.dir == 'S' ? "-"
                                        : FormatBytes(static_cast<uint64_t>(op.bytes));
    t.AddRow({when, op.comm, std::to_string(op.pid), std::to_string(op.tid), std::string(1, op.dir), op.syscall,
              bytes, op.offset < 0 ? "-" : std::to_string(op.offset), FormatNs(static_cast<uint64_t>(op.latency_ns)),
              op.file},
             {std::to_string(op.since_start), op.comm, std::to_string(op.pid), std::to_string(op.tid),
              std::string(1, op.dir), op.syscall, std::to_string(op.bytes), std::to_string(op.offset),
              std::to_string(op.latency_ns), op.file});
  }
  if (json) return t.Json();
  std::string out = RunHeadline(run);
  out += "file reads, writes and syncs of " + FormatNs(static_cast<uint64_t>(q.slower_ns)) +
         " or more (--slower); time is since the command started\n";
  // The lean tier keeps a call one by one from the off-CPU threshold up
  // (bpf/fileio.bpf.c); below it only some are rows.
  auto tier = RecordingTier(db, run.id, "fileio");
  if (!tier) return tier.error();
  auto settings = ReadRunSettings(db, run.id);
  if (!settings) return settings.error();
  int64_t kept = settings->offcpu_min_ns;
  if (*tier == Tier::kLean && q.slower_ns < kept)
    out += "note: this run's lean tier kept calls of " + FormatNs(static_cast<uint64_t>(kept)) +
           " or more one by one (--offcpu-min-us); faster ones listed here are only those it kept for another "
           "reason (first touches, syncs); `analyze files` counts them all. Record with --detail full to list "
           "every call.\n";
  if (t.size() == 0)
    return out + "none" + (q.all_kinds ? "" : " on regular files (--all adds pipes, sockets and devices)") + ".\n";
  return out + t.Text();
}

}  // namespace syspgo
