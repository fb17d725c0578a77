//===- access.h - the touches of file bytes a run made --------------------===//
// Reads, page faults, fault-around and page-cache additions of file pages,
// as one stream: what `analyze access` and the cold-start artifacts order.
#pragma once
#include <cstdint>

#include "analyze/data/query.h"

namespace syspgo::data {

// Every touch since `since` (ns), in no order (the caller sorts them: sorting
// here, with the paths joined in, was most of `analyze access` on large
// runs): ts, pid, dev, ino, byte offset,
// length, and the arm: 0 read, 1 fault, 2 fault-around, 3 page-cache
// addition (every one of a full-tier run, the first of each page of a lean
// one, which is all a first touch needs).
Status VisitTouches(Db& db, int64_t run_id, int64_t since, const RowFn& row);

// Every write to a regular file that wrote something at a known offset, in
// time order: ts, dur, dev, ino, byte offset, bytes written. The pages they
// add to the cache are the program's own data, not pages read for it.
Status VisitWrites(Db& db, int64_t run_id, const RowFn& row);

}  // namespace syspgo::data
