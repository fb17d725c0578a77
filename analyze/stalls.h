//===- stalls.h - why the program's threads stopped, named across layers -===//
// What `syspgo analyze DB stalls` prints. A stall is a period a traced
// thread spent off-CPU for at least the threshold: one long wait, or the
// waits of one operation on one file (the write()s and fsync() of a
// checkpoint block the thread many times, briefly each, and are one
// stall). Each stall is attributed across the layers the run recorded: the
// syscalls in progress and their file, bytes and offsets (fileio), what
// the kernel was waiting for (the kernel stack at sched_switch), the block
// requests issued for it directly or as writeback of that file (block),
// their latency, the user stack, and the task that woke the thread
// (sched). Stalls with the same cause (same thread name, kind of wait,
// syscalls and file, where digits in file names do not count, since a
// checkpoint-5.bin and a checkpoint-10.bin come from the same code) are one
// Finding with its count, total and worst time, its share of the run's
// wall time, its period when it recurs regularly (in seconds, and in
// steps of the thread's own loop when the thread marks its steps with a
// syscall, such as a progress line), and a fix in plain words.
//
// A pause a thread spends on a CPU inside syscalls (random bytes, a large
// copy into the page cache) is a stall too: oncpu_stalls.h finds those, and
// they are findings of cause "kernel-cpu" beside the others.
//
// A wait that is not I/O is named for what it is, from its kernel stack
// and syscall: a lock (futex), a sleep, a pipe or socket, poll/epoll, a
// child, a kernel lock, or a CPU the thread was ready for but did not
// get. Block requests are attributed only to I/O waits, never to these.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/critical_path.h"
#include "analyze/finding.h"
#include "analyze/run.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

inline constexpr int64_t kDefaultStallThresholdNs = 10'000'000;

struct StallsQuery {
  int64_t run_id = 0;
  int64_t threshold_ns = kDefaultStallThresholdNs;  // shortest off-CPU time that makes a stall
};

// What a stall finding says beyond Finding, in numbers (--json "detail").
struct StallDetail {
  // io (disk I/O), page-fault, lock (futex), sleep, pipe, socket, poll, child, kernel-lock,
  // device, cpu (runnable, waiting for a CPU), other; kernel-cpu (on a CPU in syscalls: oncpu_stalls.h)
  std::string cause;
  std::string comm;                   // the thread's name
  bool main_thread = false;           // tid == pid
  std::vector<int64_t> pids, tids;
  std::vector<std::string> syscalls;  // recorded ones, in order of first use in an occurrence
  std::vector<std::string> inferred_syscalls;  // seen only on the kernel stack (not recorded by fileio)
  std::string file;                   // the file's path, or its shape ("<N>" for digits) when names differ
  std::vector<std::string> paths;     // the distinct paths
  int64_t bytes_written = 0;          // per occurrence (median)
  int64_t bytes_read = 0;             // per occurrence (median)
  int64_t synced_bytes = 0;           // per occurrence (median): written since the previous sync, for a sync
  int64_t offcpu_ns = 0;              // summed: blocked_ns + runnable_ns
  int64_t blocked_ns = 0;             // summed time asleep (waiting)
  int64_t runnable_ns = 0;            // summed time ready to run without a CPU
  int64_t block_requests = 0;         // summed over occurrences
  int64_t block_bytes = 0;            // summed over occurrences
  std::map<std::string, int64_t> block_bytes_by_op;  // read, write, discard, ... -> bytes, summed
  std::string wait;                   // what the longest wait was for, in words
  std::string waker;                  // who ended the longest wait
  int64_t period_ns = 0;              // 0 if not periodic
  int64_t period_steps = 0;           // 0 unless the thread's steps were found
  int64_t step_ns = 0;                // a step's length, when found
  // Where its waits came down to (critical_path.h): the roots of all its
  // off-CPU time, most first, but for the main root in roots[0]: the
  // largest that is no wait for a CPU (unless the stall is preemption).
  // roots[0].hops is the chain that leads there.
  std::vector<RootShare> roots;
  // Findings merged into this one because their waits share its root:
  // "title (N x, total)" for each, and their chains.
  std::vector<std::string> stalls_too;
  std::vector<std::vector<PathHop>> stalls_too_chains;
  // kernel-cpu stalls: time on a CPU in the calls, summed, and what the
  // kernel did, from the CPU samples inside them (what -> ns), most first.
  int64_t oncpu_ns = 0;
  std::vector<std::pair<std::string, int64_t>> kernel_work;
};

struct StallsReport {
  int64_t run_id = 0;
  int64_t wall_ns = 0;                // command start to the end of collection
  int64_t threshold_ns = 0;
  int64_t intervals = 0;              // off-CPU intervals recorded
  int64_t longest_ns = 0;             // the longest of them
  std::vector<Finding> findings;      // most total time first
  std::vector<StallDetail> details;   // one per finding, same order
  // The critical path of the command's main thread from its release to its
  // exit: the share of wall time each root accounts for.
  int64_t command_tid = 0;
  std::vector<RootShare> command_path;
};

// Errors say when the run has no off-CPU data (the sched group was off)
// and how to record it.
Result<StallsReport> FindStalls(Db& db, const StallsQuery& q);

// `syspgo analyze DB stalls`: the findings as text (evidence with
// `verbose`) or as JSON.
// Text shows the first kTopFindings findings unless `all` (finding_print.h).
Result<std::string> StallsReportText(Db& db, const RunInfo& run, const StallsQuery& q, bool json, bool verbose,
                                     bool all = false);

}  // namespace syspgo
