//===- prefetch_session.h - `syspgo prefetch`: a plan replayed, a program run ===//
//
// A prefetch session replays a prefetch plan alone (optionally holding the
// pages it read in memory), or ahead of or beside the program it was made
// for, and can start that program with the readahead library preloaded
// (a readahead plan's advice). Prefetching only ever speeds a program up,
// so with a command nothing here may stop it from running: an unreadable
// plan or a failing file is a warning, and the exit status is the
// command's. The CLI (cli/cmd_prefetch.cc) parses the options into a
// PrefetchSession and calls RunPrefetchSession.
#pragma once
#include <string>
#include <vector>

#include "common/result.h"
#include "optimize/prefetch.h"

namespace syspgo {

// The longest --hold: a day.
inline constexpr unsigned kPrefetchMaxHoldSeconds = 86400;

struct PrefetchSession {
  std::string plan;       // the prefetch plan file; "" for a readahead plan alone
  std::string readahead;  // a readahead plan file to apply inside the command; "" for none
  std::string json;       // where the JSON summary goes ("-": stdout; "": nowhere)
  bool dry_run = false;   // check the files and list what would be read; read nothing
  bool before = false;    // finish the replay before starting the command
  int verbose = 0;        // 1: the summary also with a command; 2: also one line per file
  unsigned hold = 0;      // without a command: seconds to keep the replayed pages locked (0: none)
  // The replay's knobs. Its `warn` also receives the session's own
  // warnings (a readahead plan left out, a plan that cannot be read when a
  // command runs anyway).
  PrefetchOptions prefetch;
  std::vector<std::string> command;  // the program to run, argv; empty for a replay alone
};

// Runs the session and returns the exit status: the command's when there
// is one (126 or 127 when it cannot start, as a shell says); else 0 once the
// plan was replayed, 1 when the hold or the JSON summary failed. Without a
// command, a plan that cannot be read is the error.
Result<int> RunPrefetchSession(PrefetchSession s);

}  // namespace syspgo
