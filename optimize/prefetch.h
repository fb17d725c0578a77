//===- prefetch.h - replay a prefetch plan into the page cache -------------===//
//
// `syspgo prefetch` warms the page cache along a plan so that a program's
// cold start finds its data already in memory. The replayer reads exactly
// the planned ranges, in plan order, with a few threads and a bound on the
// bytes in flight, and never reads a file whose fingerprint no longer
// matches the plan: a changed, missing or unreadable file is reported and
// skipped while the rest is still read.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/result.h"
#include "optimize/plan.h"

namespace syspgo {

// Tuning knobs with their defaults and limits (the CLI shows this table).
inline constexpr unsigned kPrefetchDefaultThreads = 4;
inline constexpr unsigned kPrefetchMaxThreads = 64;
// Bytes queued ahead of the reads: enough to keep the disk busy, and no
// more, since with a command running beside the replay the command's own
// reads of what the plan missed wait behind whatever is queued (a
// scheduler such as mq-deadline also sorts the queue by sector).
inline constexpr uint64_t kPrefetchDefaultBudget = 8ULL << 20;
inline constexpr uint64_t kPrefetchMaxBudget = 4ULL << 30;
// With a command in parallel: how much of the plan is queued before the
// command starts (0: its first read). The lookups made after the lead are
// resolved beside the reads (SplitLookups), so a lead only makes the
// command wait for reads it does not need yet: with a lead past the
// budget, it waits until the reads before the lead are done
// (bench/RESULTS.md, coldstart: *plan, 16 MiB lead*).
inline constexpr uint64_t kPrefetchDefaultLead = 0;
// One read request is at most this long. It stays within the readahead
// window of a disk set up for fast sequential reads, so that
// POSIX_FADV_WILLNEED, which queues at most a window, queues the whole
// chunk at once.
inline constexpr uint64_t kPrefetchMaxChunk = 4ULL << 20;

struct PrefetchOptions {
  unsigned threads = kPrefetchDefaultThreads;     // 1..kPrefetchMaxThreads
  uint64_t budget_bytes = kPrefetchDefaultBudget;  // most bytes being read at once
  // Called (from worker threads, one call at a time) with a sentence naming
  // a file that is skipped and why.
  std::function<void(const std::string&)> warn;
  // When set to true, workers stop after their current chunk.
  const std::atomic<bool>* cancel = nullptr;
  // Called once, from a worker, when the first lead_bytes of the plan (in
  // replay order) are queued at the device, or the replay ends first. A command started
  // from then on finds its first pages arriving rather than missing: a
  // page it faults on that is already queued is waited for, while a page
  // not yet queued costs a read of the device's whole readahead window.
  std::function<void()> on_queued;
  uint64_t lead_bytes = kPrefetchDefaultLead;
  // Read in the idle I/O class, so that other tasks' reads (the command's
  // own misses) go first.
  bool idle_io = true;
  // Resolve the command's PATH search and the plan's lookups. The search,
  // and with a command (on_queued set) the lookups the program made before
  // the first lead_bytes' last first touch, are resolved before any extent
  // is queued; the rest are resolved beside the reads, in first-touch order,
  // in the reads' I/O class.
  bool lookups = true;
  // The command the replay runs beside (its argv), if any. Its PATH search
  // is looked up first, as execvp(3) will make it: the misses in the
  // directories before the one that holds it are lookups too, which no
  // profile sees (a failed exec leaves no trace), and behind the queued
  // extents each cost the exec a disk read. When argv[0] is a wrapper that
  // runs a command named later on its line (env, nice, time, timeout, ...;
  // see ResolveCommandSearch in prefetch.cc), that command's search is
  // looked up too.
  std::vector<std::string> command;
};

enum class FileOutcome {
  kRead,        // fingerprint matched; its extents were read
  kChanged,     // fingerprint differs from the plan: skipped
  kMissing,     // does not exist: skipped
  kFailed,      // could not be opened, checked or read: skipped from then on
  kNotReached,  // the replay was cancelled before reaching it
};
const char* OutcomeName(FileOutcome o);

struct PrefetchFileResult {
  FileOutcome outcome = FileOutcome::kNotReached;
  std::string reason;      // why it was skipped, for people
  uint64_t bytes_read = 0; // bytes of its extents read (or, in a dry run, that would be)
};

struct PrefetchStats {
  std::vector<PrefetchFileResult> files;  // parallel to Plan::files
  size_t files_read = 0, files_changed = 0, files_missing = 0, files_failed = 0, files_not_reached = 0;
  uint64_t extents_read = 0;
  uint64_t bytes_read = 0;     // bytes the reads returned (short at end of file)
  uint64_t bytes_planned = 0;  // Plan::Bytes()
  uint64_t elapsed_ns = 0;     // lookups included
  size_t lookups_planned = 0;  // Plan::lookups, and the command's PATH search
  size_t lookups_found = 0;    // of them, paths that resolved (the others were missing, as they
                               // often were for the program too: a library search's misses)
  size_t lookups_first = 0;    // of them, resolved before any extent was queued
  uint64_t lookup_first_ns = 0;  // time those took
  uint64_t lookup_ns = 0;      // time until the last lookup resolved (from the replay's start)
  unsigned threads = 0;        // threads used (fewer than asked when the budget is small)
  uint64_t chunk_bytes = 0;    // longest single read request
};

// Replays `plan`: resolves its lookups and reads its extents (see
// PrefetchOptions::lookups for which lookups go first). Never fails
// as a whole: per-file problems are in the stats and reported through
// options.warn (a lookup that finds nothing is not a problem).
PrefetchStats Replay(const Plan& plan, const PrefetchOptions& options);

// Checks every file as Replay would (without reading planned data into the
// page cache) and returns the stats Replay would produce, with bytes_read
// the bytes it would read. `listing` receives, in replay order, one line
// per extent it would read, then a total.
PrefetchStats DryRun(const Plan& plan, const PrefetchOptions& options, std::string* listing);

// The stats as one JSON object for machines: totals, lookups, and per file
// of the plan its outcome, why it was skipped, and bytes read and planned.
// The members of `extra` (an object: "command_status", "damon_pageout"...)
// are added before the files.
std::string PrefetchStatsJson(const Plan& plan, const PrefetchStats& s, const nlohmann::ordered_json* extra = nullptr);

// Pages of a replay held in memory (prefetch --hold): the files the replay
// read are mapped and their planned extents locked (mlock), so that neither
// reclaim nor DAMON's proactive pageout evicts them before the program
// starts. The lock lasts as long as this object, in this process (locks are
// not inherited across fork).
class HeldPages {
 public:
  HeldPages() = default;
  HeldPages(HeldPages&& o) noexcept;
  HeldPages& operator=(HeldPages&&) = delete;
  HeldPages(const HeldPages&) = delete;
  ~HeldPages();
  uint64_t bytes = 0;  // bytes locked
  size_t files = 0;    // files they belong to

 private:
  friend Result<HeldPages> HoldPlanPages(const Plan& plan, const PrefetchStats& replayed);
  std::vector<std::pair<void*, size_t>> maps_;
};

// Locks the planned extents of every file `replayed` read (outcome kRead)
// that still matches its fingerprint; an error names the file it could not
// lock and what to do. Without root's rights, a plan whose pages pass the
// locked-memory limit (RLIMIT_MEMLOCK) is refused before anything is
// locked, naming the limit.
Result<HeldPages> HoldPlanPages(const Plan& plan, const PrefetchStats& replayed);

// A process holding a replay's pages (prefetch --hold) after we exit.
struct PageHolder {
  pid_t pid = 0;
  uint64_t bytes = 0;  // as HeldPages
  size_t files = 0;
};

// Forks the process that holds the pages of `replayed` (HoldPlanPages) for
// `seconds`, then ends; waits until it holds them and returns it, or the
// error it met once it is gone. It holds them itself because locks are not
// inherited across fork, and it runs apart from us: in a session of its
// own, its stdin, stdout and stderr /dev/null, no other descriptor of ours
// open, so that whoever reads our output sees its end when we exit, not
// when the hold ends. Killing it releases the pages sooner. Under sudo it
// becomes the invoking user before it locks anything, so it is held to
// their RLIMIT_MEMLOCK and they can kill it. It is our
// child: a caller that outlives it reaps it. The child runs plan code
// without an exec, so call this when no other thread of ours is running.
Result<PageHolder> StartPageHolder(const Plan& plan, const PrefetchStats& replayed, unsigned seconds);

}  // namespace syspgo
