//===- run_settings.h - what a run was recorded with ----------------------===//
// The probe groups and knobs `collect` had in force, the build-ids it read
// and the DAMON schemes that could evict page cache meanwhile: columns of
// run and rows of run_setting_probe, run_collector_file and
// run_damon_scheme (schemas/profile.sql). collect fills RunSettings and
// stores it with WriteRunSettings (common/profile_db.h); analyses ask
// ReadRunSettings (analyze/run.h). No database here: the static
// syspgo-prefetch shows the DAMON schemes too, as JSON.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace syspgo {

// A DAMON scheme that pages memory out without pressure (common/damon.h).
struct DamonScheme {
  std::string path;         // "kdamonds/K/contexts/C/schemes/S", or "damon_reclaim"
  std::string ops;          // a kdamond's operations set ("paddr", "vaddr")
  int64_t min_age = -1;     // kdamond: idle aggregation intervals before pageout (-1 unknown)
  int64_t aggr_us = -1;     // kdamond: the aggregation interval, µs
  int64_t min_age_us = -1;  // damon_reclaim: idle µs before pageout
  bool operator==(const DamonScheme&) const = default;
};

struct RunSettings {
  std::vector<std::string> probes;  // probe groups attached or tried
  uint64_t ringbuf_bytes = 0;       // per group
  uint64_t memory_budget_bytes = 0;
  uint32_t freq_hz = 0;             // cpu sampling; 0 unknown
  int64_t offcpu_min_ns = 0;        // shortest off-CPU interval (and, lean, file call) kept one by one
  int64_t irq_min_ns = 0;           // shortest interrupt handler run kept one by one
  std::string detail;               // "lean" | "full"; "" before tiers existed
  bool cold = false;                // the page cache was dropped before the command
  bool no_readahead = false;        // block readahead was off while it ran
  std::vector<std::pair<uint64_t, uint64_t>> collector_files;  // (st_dev, ino) the collector mapped
  std::string kernel_build_id, vdso_build_id;                  // lowercase hex, "" unknown
  std::optional<std::vector<DamonScheme>> damon;               // recorded with the pagecache group
  bool operator==(const RunSettings&) const = default;
};

// The schemes as a JSON array of objects (prefetch's summary shows them).
nlohmann::ordered_json DamonSchemesJson(const std::vector<DamonScheme>& schemes);

// Reads run.settings_json, the JSON object databases before schema version
// 5 kept the settings in; the migration to version 5 is its one caller.
// Databases come from others: a member that is absent, of another type or
// out of range keeps its default, and text that is not JSON gives the
// defaults, so an analysis can still say what it can.
RunSettings ParseSettings(std::string_view json);

}  // namespace syspgo
