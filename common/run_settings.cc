//===- run_settings.cc - what a run was recorded with ---------------------===//
#include "common/run_settings.h"

#include <limits>

#include <nlohmann/json.hpp>

namespace syspgo {
namespace {

using Json = nlohmann::ordered_json;

// A member of `j` if it holds an integer in [lo, hi].
template <typename T>
void Get(const Json& j, const char* key, T& out, int64_t lo = std::numeric_limits<int64_t>::min(),
         int64_t hi = std::numeric_limits<int64_t>::max()) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return;
  int64_t v = it->get<int64_t>();
  if (v >= lo && v <= hi) out = static_cast<T>(v);
}

void Get(const Json& j, const char* key, bool& out) {
  auto it = j.find(key);
  if (it != j.end() && it->is_boolean()) out = it->get<bool>();
}

void Get(const Json& j, const char* key, std::string& out) {
  auto it = j.find(key);
  if (it != j.end() && it->is_string()) out = it->get<std::string>();
}

}  // namespace

Json DamonSchemesJson(const std::vector<DamonScheme>& schemes) {
  Json a = Json::array();
  for (const DamonScheme& d : schemes) {
    Json o = {{"path", d.path}};
    if (d.path == "damon_reclaim") {
      o["min_age_us"] = d.min_age_us;
    } else {
      o["ops"] = d.ops;
      o["min_age"] = d.min_age;
      o["aggr_us"] = d.aggr_us;
    }
    a.push_back(std::move(o));
  }
  return a;
}

RunSettings ParseSettings(std::string_view text) {
  RunSettings s;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return s;
  if (auto it = j.find("probes"); it != j.end() && it->is_array())
    for (const Json& p : *it)
      if (p.is_string()) s.probes.push_back(p.get<std::string>());
  Get(j, "ringbuf_bytes", s.ringbuf_bytes, 0);
  Get(j, "memory_budget_bytes", s.memory_budget_bytes, 0);
  Get(j, "freq_hz", s.freq_hz, 0, std::numeric_limits<uint32_t>::max());
  Get(j, "offcpu_min_ns", s.offcpu_min_ns, 0);
  Get(j, "irq_min_ns", s.irq_min_ns, 0);
  Get(j, "detail", s.detail);
  Get(j, "cold", s.cold);
  Get(j, "no_readahead", s.no_readahead);
  if (auto it = j.find("collector_files"); it != j.end() && it->is_array())
    for (const Json& f : *it)
      if (f.is_array() && f.size() == 2 && f[0].is_number_unsigned() && f[1].is_number_unsigned())
        s.collector_files.emplace_back(f[0].get<uint64_t>(), f[1].get<uint64_t>());
  Get(j, "kernel_build_id", s.kernel_build_id);
  Get(j, "vdso_build_id", s.vdso_build_id);
  if (auto it = j.find("damon"); it != j.end() && it->is_array()) {
    s.damon.emplace();
    for (const Json& o : *it) {
      if (!o.is_object()) continue;
      DamonScheme d;
      Get(o, "path", d.path);
      Get(o, "ops", d.ops);
      Get(o, "min_age", d.min_age, -1);
      Get(o, "aggr_us", d.aggr_us, -1);
      Get(o, "min_age_us", d.min_age_us, -1);
      s.damon->push_back(std::move(d));
    }
  }
  return s;
}

}  // namespace syspgo
