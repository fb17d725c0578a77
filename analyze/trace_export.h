//===- trace_export.h - a run as a Chrome trace-event JSON file ----------===//
// What `syspgo export DB --format perfetto -o trace.json` writes: the
// JSON Object Format of the Trace Event Format (the one chrome://tracing
// and ui.perfetto.dev open), so a run can be browsed in Perfetto's UI
// next to other traces. Layout:
//   - one process per traced pid and one track per tid, named from the
//     process and thread tables ("M" metadata events);
//   - on each thread's track, complete ("X") events for its file syscalls
//     and its off-CPU intervals (an off-CPU interval inside a syscall nests
//     under it: a thread cannot leave a syscall while it is off-CPU);
//   - per block device, a process whose tracks are queue slots: requests in
//     flight together go to different slots, because complete events on
//     one track must nest and concurrent requests do not;
//   - page-cache additions and deletions as instant ("i") events on the
//     track of the task that made them (kswapd's too), and the pages the
//     run added minus those it deleted as a counter ("C") track;
//   - the findings' occurrences as complete events on a "syspgo findings"
//     process, one slot per overlap as for devices.
//   - the wakeups on the way from each finding to its root (critical
//     path) as flow events ("s" on the waker's track, "f" on the woken
//     thread's), which Perfetto draws as arrows.
// Timestamps are microseconds since the run's start with nanosecond
// digits (ts 1234.567 = 1234567 ns), as the format requires; events are
// written in time order.
#pragma once
#include <cstdint>
#include <string>

#include "analyze/report_findings.h"
#include "analyze/run.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

// Synthetic pids (devices, counters, findings) start here: above any pid
// Linux hands out (PID_MAX_LIMIT is 2^22), so they cannot collide.
inline constexpr int64_t kTraceSyntheticPid = int64_t{1} << 23;

struct TraceStats {
  int64_t syscalls = 0, offcpu = 0, block = 0, page_cache = 0, findings = 0, counters = 0, metadata = 0;
  int64_t flows = 0;  // wakeups on the way to a finding's root, as flow arrows
};

// Writes the trace of `run` to `out` (a file path; replaced atomically).
// Errors name the database or the file, and what to do.
Result<TraceStats> ExportChromeTrace(Db& db, const RunInfo& run, const FindingSet& findings, const std::string& out);

}  // namespace syspgo
