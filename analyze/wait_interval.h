//===- wait_interval.h - one off-CPU interval of a traced thread ----------===//
// The unit both stall attribution (stalls.cc) and the critical path
// (critical_path.h) reason about: a row of `offcpu` with what the analyses
// add to it (the syscall in progress, the episode it belongs to).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace syspgo {

struct Interval {
  int64_t ts = 0, dur = 0, pid = 0, tid = 0, cpu = 0, state = 0, kstack = 0, ustack = 0;
  bool woken = false;
  int64_t wake_ts = 0;  // when it was woken (valid when woken)
  int64_t waker_pid = 0, waker_tid = 0, waker_kstack = 0, waker_ustack = 0;
  std::string waker_comm;
  std::string call;       // the recorded syscall in progress, "" if none
  int64_t call_kind = 0;  // the type bits of its file
  int episode = -1;       // -> the stall analysis' episodes
  bool blocked() const { return state != 0; }  // asleep, not merely preempted
  int64_t end() const { return ts + dur; }
};
using Intervals = std::vector<Interval>;  // one thread's, by time

// On-CPU (or at least not off-CPU-recorded) time of a thread in [a, b).
inline int64_t OnCpu(const Intervals& ivs, int64_t a, int64_t b) {
  if (b <= a) return 0;
  auto it = std::lower_bound(ivs.begin(), ivs.end(), a, [](const Interval& iv, int64_t t) { return iv.end() <= t; });
  int64_t off = 0;
  for (; it != ivs.end() && it->ts < b; ++it) off += std::min(b, it->end()) - std::max(a, it->ts);
  return b - a - off;
}

}  // namespace syspgo
