//===- report_common.cc - helpers the HTML report and trace export share -===//
#include "analyze/report_common.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/util.h"

namespace syspgo {

std::string JsonForScript(const nlohmann::ordered_json& j) {
  std::string text = JsonText(j);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

int64_t StringTable::Index(const std::string& s) {
  auto [it, added] = index_.emplace(s, static_cast<int64_t>(strings_.size()));
  if (added) strings_.push_back(s);
  return it->second;
}

int LaneAssigner::Add(int64_t ts, int64_t dur) {
  size_t l = 0;
  while (l < lane_end_.size() && lane_end_[l] > ts) ++l;
  if (l == lane_end_.size()) lane_end_.push_back(0);
  lane_end_[l] = ts + (dur > 0 ? dur : 0);
  return static_cast<int>(l);
}

std::string OffCpuStateName(int64_t state) {
  // Bits as sched_switch reports prev_state (include/linux/sched.h):
  // TASK_IDLE is TASK_UNINTERRUPTIBLE | TASK_NOLOAD and must be told apart
  // from a real uninterruptible (usually I/O) wait.
  if ((state & 0x402) == 0x402) return "I (idle wait)";
  if (state & 2) return "D (uninterruptible, usually I/O)";
  if (state & 1) return "S (sleeping)";
  if (state & 4) return "T (stopped)";
  if (state & 8) return "t (traced)";
  if (state == 0) return "R (preempted, runnable)";
  return "state " + std::to_string(state);
}

}  // namespace syspgo
