//===- io.cc - synchronous file operations slower than a threshold -------===//
// The slow calls are selected in SQL (few rows); the thread's name is the
// one it had at the call, else its process's (analyze/tasks.h).
#include "analyze/io.h"

#include <cstdio>

#include "analyze/file_calls.h"
#include "analyze/file_paths.h"
#include "analyze/run.h"
#include "analyze/tasks.h"
#include "common/util.h"

namespace syspgo {
namespace {

// Reads, writes and syncs (file_calls.h); kind is the file's i_mode type
// bits: regular files and block devices unless ?3.
const std::string kSlowSql = R"sql(
SELECT io.ts, io.pid, io.tid, io.nr, COALESCE(n.name, 'syscall ' || io.nr),
       io.dev, io.ino, io.kind, io.pos, io.ret, io.dur
FROM file_io AS io
LEFT JOIN syscall_name AS n ON n.nr = io.nr
WHERE io.run_id = ?1 AND io.dur >= ?2
  AND io.nr IN ()sql" + SqlList(kReadCalls) + ", " + SqlList(kWriteCalls) + ", " + SqlList(kSyncCalls) + R"sql()
  AND (?3 OR (io.kind & )sql" + std::to_string(SYSPGO_S_IFMT) + ") IN (" + std::to_string(SYSPGO_S_IFREG) + ", " +
                              std::to_string(SYSPGO_S_IFBLK) + R"sql())
ORDER BY io.ts, io.tid
)sql";

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
  auto st = db.Prepare(kSlowSql);
  if (!st) return st.error();
  st->Bind(1, q.run_id).Bind(2, q.slower_ns).Bind(3, int64_t{q.all_kinds});
  std::vector<SlowOp> out;
  Status err;
  while (st->Step(&err)) {
    SlowOp op;
    op.ts = st->Int(0);
    op.since_start = op.ts - window->command_start_ns;
    op.pid = st->Int(1);
    op.tid = st->Int(2);
    op.dir = Direction(st->Int(3));
    op.syscall = st->Text(4);
    uint64_t dev = st->Int(5), ino = st->Int(6);
    op.file = dev ? paths->At(dev, ino, op.ts) : "";
    if (op.file.empty()) op.file = dev ? KindLabel(st->Int(7), ino) : "(fd not open)";
    op.offset = st->Int(8);
    op.bytes = st->Int(9);
    op.latency_ns = st->Int(10);
    op.comm = tasks->Name(op.tid, op.pid, op.ts);
    out.push_back(std::move(op));
    if (q.limit && out.size() >= q.limit) break;
  }
  if (!err.ok()) return err.error();
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
