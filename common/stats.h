//===- stats.h - summaries of repeated measurements -----------------------===//
// The one median syspgo takes of its measurements (run times, ratios):
// benches, the pgo evaluation and the tests that compare timed steps.
#pragma once
#include <algorithm>
#include <vector>

namespace syspgo {

// The middle value, or the mean of the two middle ones; 0 for none.
inline double Median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  size_t h = xs.size() / 2;
  std::nth_element(xs.begin(), xs.begin() + static_cast<long>(h), xs.end());
  double hi = xs[h];
  if (xs.size() % 2) return hi;
  return (*std::max_element(xs.begin(), xs.begin() + static_cast<long>(h)) + hi) / 2;
}

}  // namespace syspgo
