//===- critical_path.h - a wait followed through its wakers to its root ----===//
// A thread that waits on another traced task waits, in truth, on whatever
// that task was doing meanwhile: a client blocked in recvfrom waits on the
// server thread that sends the reply, and if that thread slept 80 ms before
// sending, the client's 80 ms are a timer sleep in the server. BCC's
// offwaketime shows one waker hop; wPerf (OSDI'18) and Perfetto's thread
// critical path follow the chain. This does the same from the database:
// Explain(thread, a, b) splits [a, b) of a thread's time into segments,
// each ending in a root that waits on no traced task:
// - the thread's own work on a CPU;
// - a CPU it was ready for but did not get (preempted, or woken and not
//   yet run);
// - the disk (the wakeup came from a block request's completion), one root
//   per thread name and file whatever the phase (writeback, journal,
//   flush), since moving the I/O off the path is one fix for all of them;
// - a timer (the wakeup came from a timer: a sleep, a timeout);
// - an interrupt on an idle CPU or in an unrelated task's context;
// - a process outside the traced tree (but a disk wait ended by a kernel
//   thread, such as the journal's, is the disk's);
// - a wakeup the run did not record.
// A wait woken by a traced task in process context (a futex released, a
// pipe or socket written, a child exiting; also the softirq of a loopback
// send, which runs in the sender's context) is followed into that task for
// the part of the wait before the wakeup, recursively: its own waits are
// explained the same way, its running time is its work.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analyze/wait_interval.h"
#include "analyze/work_breakdown.h"

namespace syspgo {

struct PathRoot {
  enum class Kind { kWork, kCpu, kDisk, kTimer, kInterrupt, kOutside, kUnknown };
  Kind kind = Kind::kUnknown;
  int64_t tid = 0, pid = 0;  // whose: the thread that ran, slept or waited on the disk (the process for kOutside)
  std::string comm;
  std::string what;          // in words: "sleeps in clock_nanosleep", "runs on a CPU"
  std::string detail;        // more, not part of the key: who had the CPU it waited for
  std::string group;         // part of the key: "command" for the command's own process (Hooks::group)
  std::string KindName() const;  // work, cpu, disk, timer, interrupt, outside, unknown
  std::string Key() const;       // equal for the same root in threads of one name
  std::string Text() const;      // "timer: server (tid 12) sleeps in clock_nanosleep" (and the detail)
};

// One thread on the way to a root: what it was doing that made the thread
// before it wait.
struct PathHop {
  int64_t tid = 0, pid = 0;
  std::string comm;
  std::string doing;  // "waits on a socket in recvfrom"
  int64_t ts = 0, dur = 0;  // the interval it waited in
  int64_t wake_ts = 0;      // when the next thread on the way (or the root's) woke it
};

struct PathSegment {
  int64_t ns = 0;
  int64_t from = 0;  // [from, from + ns) of the root's thread
  PathRoot root;
  std::vector<PathHop> hops;  // from the thread asked about up to (not including) the root's own
};

// Segments with the same root, summed; `hops` of the longest of them.
struct RootShare {
  PathRoot root;
  int64_t ns = 0;
  std::vector<PathHop> hops;
  std::vector<WorkSpan> spans;  // a work root's segments: the time it ran, to break down
  WorkBreakdown work;           // where that time went, when the caller asked (work_breakdown.h)
};

// "client (tid 10) waits on a socket in recvfrom 80.1 ms <- server (tid 11)"
// then the root: one line for people.
std::string ChainText(const std::vector<PathHop>& hops, const PathRoot& root);

class CriticalPath {
 public:
  struct Hooks {
    std::function<std::string(int64_t tid, int64_t pid, int64_t ts)> comm;  // a thread's name then
    std::function<const std::vector<std::string>&(int64_t stack)> kernel;    // a kernel stack's frames
    std::function<bool(int64_t tid)> traced;                                 // a thread of the traced tree
    std::function<std::string(const Interval&)> doing;  // what a blocked interval waits for, in words
    std::function<bool(const Interval&)> disk;          // whether it waits for disk I/O (or a page fault's)
    std::function<std::string(const Interval&)> file;   // the file a disk wait is for, "" if not known
    // A user stack (stack id, pid, when) in words, "" if none: what a waker
    // was running when it ended a wait (the work under a lock, say).
    std::function<std::string(int64_t stack, int64_t pid, int64_t ts)> user_stack;
    std::function<std::string(const Interval&)> busy;   // for a runnable one: who had its CPU, in words
    // For a disk wait: the block requests that completed during it and who
    // made them (the waiter, a journal thread, a flusher), in words.
    std::function<std::string(const Interval&)> disk_requests;
    // Which processes of one name are one root: "command" for the
    // command's own, "" for the others (its workers, the compilers of a
    // build), so a pool's work is one root but never the command's.
    std::function<std::string(int64_t pid)> group;
  };
  CriticalPath(const std::map<int64_t, Intervals>& threads, Hooks hooks) : threads_(threads), hooks_(std::move(hooks)) {}

  // [a, b) of thread `tid` (of process `pid`), split into segments by root.
  std::vector<PathSegment> Explain(int64_t tid, int64_t pid, int64_t a, int64_t b) const;

  // Segments summed by root, most time first (ties by key, so the order is stable).
  static std::vector<RootShare> ByRoot(const std::vector<PathSegment>& segments);

 private:
  // `stack_at_b`: the thread's user stack at b (the wakeup it made then),
  // which names the work that ran up to it.
  void Walk(int64_t tid, int64_t pid, int64_t a, int64_t b, std::vector<PathHop>& hops, std::vector<PathSegment>& out,
            int64_t stack_at_b = 0) const;
  void Blocked(const Interval& iv, int64_t a, int64_t b, std::vector<PathHop>& hops,
               std::vector<PathSegment>& out) const;
  void Add(std::vector<PathSegment>& out, const std::vector<PathHop>& hops, int64_t from, int64_t to,
           PathRoot root) const;

  const std::map<int64_t, Intervals>& threads_;
  Hooks hooks_;
};

}  // namespace syspgo
