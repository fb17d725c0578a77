//===- groups.h - factories of the probe groups --------------------------===//
// One factory per group, each defined in collect/<group>_group.cc.
#pragma once
#include <memory>

#include "collect/probe_group.h"

namespace syspgo {

std::unique_ptr<ProbeGroup> MakeProcGroup();
// Processes the proc group (`proc`, made by MakeProcGroup) left out of the
// traced tree so far because an exec gave them rights the invoking user
// lacks (bpf/proc.bpf.c); 0 for any other group.
uint64_t ProcessesLeftOut(const ProbeGroup& proc);
std::unique_ptr<ProbeGroup> MakeFileioGroup();
// Cross-layer groups (add the factory here and its line in groups.cc):
std::unique_ptr<ProbeGroup> MakeFaultsGroup();
std::unique_ptr<ProbeGroup> MakePagecacheGroup();
std::unique_ptr<ProbeGroup> MakeBlockGroup();
std::unique_ptr<ProbeGroup> MakeIrqGroup();
std::unique_ptr<ProbeGroup> MakeSchedGroup();
std::unique_ptr<ProbeGroup> MakeCpuGroup();

}  // namespace syspgo
