//===- damon.h - which DAMON schemes may evict page cache during a run ----===//
// DAMON's proactive reclaim pages out memory its monitor sees idle, with no
// limit hit and no memory pressure: a `pageout` scheme of a kdamond under
// /sys/kernel/mm/damon/admin, or the damon_reclaim module. A run that
// records the page cache keeps what was in force (run.damon_read and
// run_damon_scheme), so the analysis can name the scheme that evicted a
// file and its knobs.
#pragma once
#include <string>
#include <vector>

#include "common/run_settings.h"

namespace syspgo {

// The pageout schemes of running kdamonds under `sysfs` (normally "/sys"),
// and damon_reclaim when enabled, as a JSON array of objects:
//   {"path": "kdamonds/0/contexts/0/schemes/0", "ops": "paddr",
//    "min_age": 6, "aggr_us": 5000000}          (min_age in aggregation intervals)
//   {"path": "damon_reclaim", "min_age_us": 120000000}
// "[]" when DAMON is absent or runs no such scheme (DamonSchemesJson in
// common/run_settings.h writes it).
std::string DamonPageoutJson(const std::string& sysfs = "/sys");

// The same schemes read once, and one line each for people:
// where the scheme is and after how long idle it pages memory out, e.g.
//   "kdamond scheme kdamonds/0/contexts/0/schemes/0 (paddr): pageout after 30 s idle".
struct DamonPageouts {
  std::vector<DamonScheme> schemes;
  std::vector<std::string> descriptions;
};
DamonPageouts ReadDamonPageouts(const std::string& sysfs = "/sys");

}  // namespace syspgo
