//===- damon.cc - which DAMON schemes may evict page cache during a run ---===//
#include "collect/damon.h"

#include <algorithm>
#include <cstdio>
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

struct Pageout {
  std::string path, ops;
  std::string min_age, aggr_us;  // kdamond: aggregation intervals and their length
  std::string min_age_us;        // damon_reclaim
};

std::vector<Pageout> Pageouts(const std::string& sysfs) {
  std::vector<Pageout> out;
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
        out.push_back({"kdamonds/" + k + "/contexts/" + c + "/schemes/" + s, Read(ctx / "operations"),
                       IsNumber(age) ? age : "-1", IsNumber(aggr) ? aggr : "-1", ""});
      }
    }
  }
  const fs::path reclaim = fs::path(sysfs) / "module/damon_reclaim/parameters";
  if (Read(reclaim / "enabled") == "Y") {
    std::string age = Read(reclaim / "min_age");
    out.push_back({"damon_reclaim", "", "", "", IsNumber(age) ? age : "-1"});
  }
  return out;
}

std::string Seconds(double us) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g s", us / 1e6);
  return buf;
}

}  // namespace

DamonPageouts ReadDamonPageouts(const std::string& sysfs) {
  DamonPageouts out;
  std::string json;
  for (const Pageout& p : Pageouts(sysfs)) {
    bool reclaim = p.path == "damon_reclaim";
    json += json.empty() ? "" : ", ";
    if (reclaim)
      json += "{\"path\": \"damon_reclaim\", \"min_age_us\": " + p.min_age_us + "}";
    else
      json += "{\"path\": \"" + p.path + "\", \"ops\": \"" + JsonEscape(p.ops) + "\", \"min_age\": " + p.min_age +
              ", \"aggr_us\": " + p.aggr_us + "}";
    bool known = reclaim ? p.min_age_us != "-1" : p.min_age != "-1" && p.aggr_us != "-1";
    std::string idle = "pageout";
    if (known) {
      double us = reclaim ? std::stod(p.min_age_us) : std::stod(p.min_age) * std::stod(p.aggr_us);
      idle += " after " + Seconds(us) + " idle";
    }
    out.descriptions.push_back(reclaim ? "the damon_reclaim module: " + idle
                                       : "kdamond scheme " + p.path + " (" + p.ops + "): " + idle);
  }
  out.json = "[" + json + "]";
  return out;
}

std::string DamonPageoutJson(const std::string& sysfs) { return ReadDamonPageouts(sysfs).json; }

}  // namespace syspgo
