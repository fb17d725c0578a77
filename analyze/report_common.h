//===- report_common.h - helpers the HTML report and trace export share --===//
// Both outputs are JSON read by a browser (the report embeds it in a
// <script> element, the trace is opened by Perfetto or chrome://tracing),
// both draw block requests of one device without overlap, and both name
// threads and off-CPU states the same way. Keeping that here makes the two
// views of one run agree.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

// `j` as JSON text (one line) that can sit inside an HTML <script>
// element: every '<', which JSON has only inside strings, is written as
// \u003c, so "</script>" or "<!--" never appears in it.
std::string JsonForScript(const nlohmann::ordered_json& j);

// Interns strings as indices into one table, so repeated labels (syscall
// names, paths) are sent once.
class StringTable {
 public:
  int64_t Index(const std::string& s);
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int64_t> index_;
};

// Lanes for intervals that may overlap (block requests of one device in
// flight together): each interval gets the lowest lane whose previous
// interval has ended, so no two in one lane overlap. Intervals must come
// in order of start; the same order always gives the same lanes.
class LaneAssigner {
 public:
  int Add(int64_t ts, int64_t dur);
  int lanes() const { return static_cast<int>(lane_end_.size()); }

 private:
  std::vector<int64_t> lane_end_;  // end of the last interval in each lane
};

// What an offcpu.state value means, for people: "S (sleeping)", ...
std::string OffCpuStateName(int64_t state);

}  // namespace syspgo
