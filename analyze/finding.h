//===- finding.h - a diagnosis, as every analysis reports it -------------===//
// Analyses that diagnose (stalls, page-cache churn, ...) return Findings: a
// root cause named across layers, how much it cost, and what to do. The CLI
// prints them, the HTML report marks them on its timeline, and --json hands
// them to machines; all three read this one type.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace syspgo {

struct Occurrence {
  int64_t ts = 0;    // ns since run start
  int64_t dur = 0;   // ns
  int64_t tid = 0;   // thread it happened on (0: not thread-specific)
};

// A wakeup on the way from a finding to its root (critical_path.h): thread
// cause_tid ended thread tid's wait at ts. The report and the trace export
// draw them as arrows.
struct FindingLink {
  int64_t ts = 0;
  int64_t cause_pid = 0, cause_tid = 0;
  int64_t pid = 0, tid = 0;
};

struct Finding {
  std::string kind;               // "stall", "pagecache-churn", ...
  std::string title;              // one line for people, e.g. "main thread stalls in fsync of /data/ckpt (50 MB)"
  // Who and what, named across layers: ordered (label, value) pairs, e.g.
  // ("thread", "train (tid 1234)"), ("syscall", "fsync"), ("file", "/data/ckpt.bin").
  std::vector<std::pair<std::string, std::string>> facts;
  int64_t count = 0;              // occurrences
  int64_t total_ns = 0;           // time lost, summed
  int64_t worst_ns = 0;           // longest single occurrence
  double share = 0;               // total_ns / the run's wall time (command_start_ts .. end_ts)
  std::string period;             // "every 5th step, 180 ms" or "" if not periodic
  std::string fix;                // what to do, in plain words, with the time it would save
  std::vector<std::string> evidence;  // supporting lines (latency histogram, stacks), for -v and the report
  // A ranked table inside the finding (the files one cause evicts): its
  // column names and rows, most first; the first column is text, the others
  // figures. Text shows the first rows (every one with --all), JSON all.
  std::vector<std::string> table_columns;
  std::vector<std::vector<std::string>> table;
  std::vector<Occurrence> occurrences;
  std::vector<FindingLink> links;  // by time
};

}  // namespace syspgo
