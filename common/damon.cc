//===- damon.cc - which DAMON schemes may evict page cache during a run ---===//
#include "common/damon.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

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

// A sysfs number, -1 if the file held none (or one too large to be a knob).
int64_t Number(const std::string& s) {
  return IsNumber(s) && s.size() <= 18 ? std::stoll(s) : -1;
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

std::vector<DamonScheme> Pageouts(const std::string& sysfs) {
  std::vector<DamonScheme> out;
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
        DamonScheme d{"kdamonds/" + k + "/contexts/" + c + "/schemes/" + s, Read(ctx / "operations")};
        d.min_age = Number(age);
        d.aggr_us = Number(aggr);
        out.push_back(std::move(d));
      }
    }
  }
  const fs::path reclaim = fs::path(sysfs) / "module/damon_reclaim/parameters";
  if (Read(reclaim / "enabled") == "Y") {
    DamonScheme d{"damon_reclaim"};
    d.min_age_us = Number(Read(reclaim / "min_age"));
    out.push_back(std::move(d));
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
  out.schemes = Pageouts(sysfs);
  for (const DamonScheme& d : out.schemes) {
    bool reclaim = d.path == "damon_reclaim";
    bool known = reclaim ? d.min_age_us >= 0 : d.min_age >= 0 && d.aggr_us >= 0;
    std::string idle = "pageout";
    if (known) idle += " after " + Seconds(reclaim ? d.min_age_us : static_cast<double>(d.min_age) * d.aggr_us) + " idle";
    out.descriptions.push_back(reclaim ? "the damon_reclaim module: " + idle
                                       : "kdamond scheme " + d.path + " (" + d.ops + "): " + idle);
  }
  return out;
}

std::string DamonPageoutJson(const std::string& sysfs) {
  return JsonText(DamonSchemesJson(ReadDamonPageouts(sysfs).schemes));
}

}  // namespace syspgo
