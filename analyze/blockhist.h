//===- blockhist.h - block latency histograms per device and direction ---===//
// What `syspgo analyze DB block` prints: for each disk (and the partition
// the I/O was submitted to) and each direction (read, write, flush,
// discard, ...), the log2 histogram of issue-to-completion latency that the
// block group kept in the kernel, drawn as biolatency draws it. The bar
// drawing is shared with the stalls pass, which shows the latency of the
// requests a stall waited on the same way.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/run.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

struct BlockHistogram {
  uint64_t dev = 0, part_dev = 0;   // st_dev encoding: whole disk, device submitted to
  std::string op;                   // read, write, flush, discard, ... (the kernel's REQ_OP_* name)
  std::map<int, int64_t> slots;     // floor(log2(ns)) -> requests
  int64_t count = 0, sum_ns = 0;
};

// The run's histograms, by disk, partition and op. An error says when the
// block group was not recorded and how to record it.
Result<std::vector<BlockHistogram>> BlockHistograms(Db& db, int64_t run_id);

// floor(log2(ns)), 0 for ns < 2: the slot the kernel side uses.
int Log2Slot(int64_t ns);
// A header, then lines "lo -> hi : count |****   |" from the first to the
// last non-empty slot (latencies in human units), bars scaled to the
// largest count; nothing when every slot is empty.
std::vector<std::string> Log2Bars(const std::map<int, int64_t>& slots);
// "254:1" for an st_dev.
std::string DevName(uint64_t dev);

// `syspgo analyze DB block`: the histograms as text, or JSON rows.
Result<std::string> BlockReport(Db& db, const RunInfo& run, bool json);

}  // namespace syspgo
