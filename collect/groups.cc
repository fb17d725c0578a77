//===- groups.cc - which probe groups exist, in load order ---------------===//
#include "collect/groups.h"

#include <cstdlib>

namespace syspgo {
namespace {

// proc first: it creates the shared maps the others reuse.
const GroupSpec kGroups[] = {
    // name        id in the programs       kernel stacks  factory
    {"proc",       SYSPGO_GROUP_PROC,       false,         &MakeProcGroup},
    {"fileio",     SYSPGO_GROUP_FILEIO,     false,         &MakeFileioGroup},
    // Cross-layer groups (their factories are declared in groups.h):
    {"faults",     SYSPGO_GROUP_FAULTS,     false,         &MakeFaultsGroup},
    {"pagecache",  SYSPGO_GROUP_PAGECACHE,  true,          &MakePagecacheGroup},
    {"block",      SYSPGO_GROUP_BLOCK,      false,         &MakeBlockGroup},
    {"irq",        SYSPGO_GROUP_IRQ,        false,         &MakeIrqGroup},
    {"sched",      SYSPGO_GROUP_SCHED,      true,          &MakeSchedGroup},
    {"cpu",        SYSPGO_GROUP_CPU,        true,          &MakeCpuGroup},
};

}  // namespace

const GroupSpec& GroupSpecOf(syspgo_group id) {
  for (auto& e : kGroups)
    if (e.id == id) return e;
  abort();  // a group class with an id the table lacks: a programming error
}

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
