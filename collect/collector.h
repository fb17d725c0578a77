//===- collector.h - one collection, from spawn to a finalized run -------===//
// Collect() validates the request, records a `run` row, loads every probe
// group, follows the command's process tree until it exits (or -p's process
// exits, the duration passes, or a signal arrives), drains the ring buffers
// to the last event and finalizes the run with its drops and exit status.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "collect/probe_group.h"
#include "common/result.h"

namespace syspgo {

// The collector's whole memory when the request does not set one
// (collect --memory-mb); it grows past this when its groups need more.
inline constexpr uint64_t kCollectDefaultMemoryBytes = 96ULL << 20;
// Under sudo, the most the collector's whole memory may be (ring buffers
// included), whatever --memory-mb and --ringbuf-mb ask: ring buffers are
// kernel memory that cannot be swapped, held by a root process the user
// cannot kill, and a sudoers grant of syspgo must not let them pin more.
// Root without sudo keeps --memory-mb's own limit.
inline constexpr uint64_t kCollectSudoMemoryCapBytes = 256ULL << 20;

struct CollectRequest {
  std::string db_path;
  std::vector<std::string> argv;  // command to spawn (empty with attach_pid)
  pid_t attach_pid = 0;           // -p
  std::string cgroup;             // --cgroup: every process of this cgroup directory, and those joining it
  std::string container;          // --container, as resolved to `cgroup` (collect/container.h): how notes name it
  bool all = false;               // --all: every process of the host
  bool new_cgroup = false;        // --new-cgroup: the command runs in a fresh cgroup (collect/scope.h)
  double duration_s = 0;          // 0 = until the command exits
  CollectOptions opts;
  // True when no command is spawned: the processes recorded already run.
  bool Attached() const { return argv.empty(); }
  bool as_root = false;            // --as-root: run the command as root (refused under sudo for a user)
  bool cold = false;              // drop the page cache just before the command starts
  bool no_readahead = false;      // device readahead off while the command runs (ReadaheadOff)
};

struct GroupReport {
  std::string name;
  bool attached = false;
  std::string detail;
  uint64_t events = 0;
  uint64_t dropped = 0;
};

struct CollectResult {
  int64_t run_id = 0;
  int exit_status = 0;            // the command's, as a shell reports it
  std::string exit_reason;        // exited | signaled | duration | interrupted | target-exited
  uint64_t events = 0;
  uint64_t dropped = 0;
  uint64_t rows = 0;
  double seconds = 0;             // wall time of the recording
  std::vector<GroupReport> groups;
  std::string write_error;        // set when recording stopped early (disk full...)
  uint64_t left_out = 0;          // processes not recorded: they had rights the invoking user lacks
};

// Set from signal handlers: SIGINT/SIGTERM end the collection cleanly.
extern std::atomic<int> g_collect_stop_signal;

Result<CollectResult> Collect(const CollectRequest& req);

}  // namespace syspgo
