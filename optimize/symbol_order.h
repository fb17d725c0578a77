//===- symbol_order.h - linker symbol order from the sampled call graph --===//
// One symbol per line, hottest cluster first, for
// `ld.lld --symbol-ordering-file=FILE` (the code must be compiled with
// -ffunction-sections). Functions that no sample touched are left out, so
// the linker keeps them where they were, after the ordered ones.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "optimize/emitter.h"

namespace syspgo {

struct OrderNode {
  std::string name;
  uint64_t size = 0;     // bytes (st_size)
  uint64_t samples = 0;  // samples with the IP in it
};

struct OrderEdge {
  uint32_t caller = 0, callee = 0;  // indices into the nodes
  uint64_t weight = 0;              // samples with this call on the stack
};

// Call-chain clustering (C3, Ottoni and Maher, CGO 2017, as in hfsort):
// functions by decreasing samples each join the cluster of their heaviest
// caller, appended after it, unless the cluster would pass kMaxClusterBytes
// or lose most of its density; clusters are then placed densest first.
// Returns node indices in placement order; ties break on names.
inline constexpr uint64_t kMaxClusterBytes = 1 << 20;
std::vector<uint32_t> CallChainOrder(const std::vector<OrderNode>& nodes, const std::vector<OrderEdge>& edges);

std::unique_ptr<ProfileEmitter> MakeSymbolOrderEmitter();

}  // namespace syspgo
