//===- readahead_plan.h - the readahead that fits each file a run touched ===//
// A readahead plan says, per file a recorded run touched, which readahead
// advice fits the way the run used it, and per block device whether its
// read_ahead_kb suits the run:
//  - a file read in order keeps its window and may grow it
//    (POSIX_FADV_SEQUENTIAL, MADV_SEQUENTIAL);
//  - a file of which a few pages were used at scattered offsets (a library
//    whose startup code and data lie far apart, an index faulted in here
//    and there) gets POSIX_FADV_RANDOM and MADV_RANDOM, so that each fault
//    or read brings the pages asked for, not the window around them;
//  - any other file is left to the kernel.
// The rules are the rows of kReadaheadRules (readahead_plan.cc), tried in
// order. The artifact is text (ReadaheadPlanText; its format is
// shim/readahead_format.h, shared with the library that reads it);
// libsyspgo-readahead.so (shim/readahead_shim.c), which `syspgo prefetch
// --readahead` preloads into the program, applies its file lines.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"
#include "shim/readahead_format.h"

namespace syspgo {

enum class ReadaheadAdvice { kDefault, kSequential, kRandom };
const char* ReadaheadAdviceName(ReadaheadAdvice a);  // "default", "sequential", "random"

struct ReadaheadFile {
  std::string path;
  uint64_t dev = 0, ino = 0;  // as stat(2) gives them now; the shim matches on these
  uint64_t size = 0;          // bytes, now
  uint64_t touches = 0;       // reads and page faults of the run
  uint64_t touched_bytes = 0; // the bytes those covered (each counted once)
  uint64_t added_bytes = 0;   // the bytes the kernel put in the page cache for the run, readahead included
  double in_order = 0;        // share of touches at or just after the one before (0 for a single touch)
  ReadaheadAdvice advice = ReadaheadAdvice::kDefault;
  const char* rule = "";      // the kReadaheadRules row that chose the advice
};

struct ReadaheadDevice {
  uint64_t dev = 0;             // the files' st_dev
  std::string block;            // "MAJ:MIN" of dev ("" if no block device holds it)
  std::string sysfs;            // the read_ahead_kb file of its queue, or its disk's ("" if none)
  int64_t read_ahead_kb = -1;   // its setting now (-1: unknown)
  int64_t advised_kb = -1;      // what fits the run (-1: no advice)
  uint64_t touched_bytes = 0, added_bytes = 0, random_bytes = 0, sequential_bytes = 0;
  std::string why;
};

struct ReadaheadPlan {
  int64_t run = 0;
  std::vector<ReadaheadFile> files;  // first-touch order
  std::vector<ReadaheadDevice> devices;
  std::vector<std::string> warnings;  // files left out (gone or replaced since the run)
};

// The plan for run `run_id` of `db` (its access order: analyze/access_order.h).
Result<ReadaheadPlan> ReadaheadPlanFromRun(Db& db, int64_t run_id);

// The artifact's text: a header line, comment lines, then tab-separated
// lines, `file` and `device` (shim/readahead_format.h).
std::string ReadaheadPlanText(const ReadaheadPlan& p);

}  // namespace syspgo
