//===- text_join.h - small helpers the stall analyses share --------------===//
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace syspgo {

// The items joined by `sep`, at most `most` of them and "..." for the rest.
inline std::string Join(const std::vector<std::string>& v, const std::string& sep, size_t most = SIZE_MAX) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < most; ++i) out += (i ? sep : "") + v[i];
  if (v.size() > most) out += sep + "...";
  return out;
}

inline int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace syspgo
