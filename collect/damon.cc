//===- damon.cc - which DAMON schemes may evict page cache during a run ---===//
#include "collect/damon.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "common/util.h"

namespace syspgo {
namespace {

namespace fs = std::filesystem;

// The first line of a sysfs file, "" if unreadable.
std::string Read(const fs::path& p) {
  std::ifstream f(p);
  std::string line;
  std::getline(f, line);
  return line;
}

bool IsNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Numbered entries (0, 1, ...) of a sysfs directory, in numeric order.
std::vector<std::string> Numbered(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (IsNumber(e.path().filename().string())) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return std::make_pair(a.size(), a) < std::make_pair(b.size(), b);
  });
  return out;
}

}  // namespace

std::string DamonPageoutJson(const std::string& sysfs) {
  std::string out;
  auto add = [&](const std::string& obj) { out += (out.empty() ? "" : ", ") + obj; };
  const fs::path admin = fs::path(sysfs) / "kernel/mm/damon/admin/kdamonds";
  for (const std::string& k : Numbered(admin)) {
    if (Read(admin / k / "state") != "on") continue;
    const fs::path contexts = admin / k / "contexts";
    for (const std::string& c : Numbered(contexts)) {
      const fs::path ctx = contexts / c;
      std::string aggr = Read(ctx / "monitoring_attrs/intervals/aggr_us");
      for (const std::string& s : Numbered(ctx / "schemes")) {
        const fs::path scheme = ctx / "schemes" / s;
        if (Read(scheme / "action") != "pageout") continue;
        std::string age = Read(scheme / "access_pattern/age/min");
        add("{\"path\": \"kdamonds/" + k + "/contexts/" + c + "/schemes/" + s + "\", \"ops\": \"" +
            JsonEscape(Read(ctx / "operations")) + "\", \"min_age\": " + (IsNumber(age) ? age : "-1") +
            ", \"aggr_us\": " + (IsNumber(aggr) ? aggr : "-1") + "}");
      }
    }
  }
  const fs::path reclaim = fs::path(sysfs) / "module/damon_reclaim/parameters";
  if (Read(reclaim / "enabled") == "Y") {
    std::string age = Read(reclaim / "min_age");
    add("{\"path\": \"damon_reclaim\", \"min_age_us\": " + (IsNumber(age) ? age : "-1") + "}");
  }
  return "[" + out + "]";
}

}  // namespace syspgo
