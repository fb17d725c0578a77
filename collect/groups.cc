//===- groups.cc - which probe groups exist, in load order ---------------===//
#include "collect/groups.h"

namespace syspgo {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<ProbeGroup> (*make)();
};

// proc first: it creates the shared maps the others reuse.
const Entry kGroups[] = {
    {"proc", &MakeProcGroup},
    {"fileio", &MakeFileioGroup},
    // @groups: one line per cross-layer group, e.g. {"faults", &MakeFaultsGroup},
    {"faults", &MakeFaultsGroup},
    {"pagecache", &MakePagecacheGroup},
    {"block", &MakeBlockGroup},
    {"irq", &MakeIrqGroup},
    {"sched", &MakeSchedGroup},
    {"cpu", &MakeCpuGroup},
};

}  // namespace

std::vector<std::string> AllProbeGroupNames() {
  std::vector<std::string> names;
  for (auto& e : kGroups) names.push_back(e.name);
  return names;
}

std::vector<std::unique_ptr<ProbeGroup>> MakeProbeGroups(const CollectOptions& opts) {
  std::vector<std::unique_ptr<ProbeGroup>> groups;
  for (auto& e : kGroups) {
    if (std::string(e.name) == "proc" || opts.probes.count(e.name)) groups.push_back(e.make());
  }
  return groups;
}

}  // namespace syspgo
