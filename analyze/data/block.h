//===- block.h - the block requests of a run, as rows --------------------===//
// block_rq (one row per request, with the task and file it was for),
// block_op (the names of the request operations) and the kernel's latency
// histograms.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "analyze/data/query.h"

namespace syspgo::data {

// Requests in flight during [start, end), issued at or after `issued_after`,
// by thread `tid` or carrying pages of `file` (dev, ino; ino 0 for none), by
// issue time then sector: ts, dur, bytes, op name, flags, tid, comm.
Status VisitRequestsInFlight(Db& db, int64_t run_id, int64_t issued_after, int64_t start, int64_t end, int64_t tid,
                             std::pair<uint64_t, uint64_t> file, const RowFn& row);
// Who made the requests that completed within [from, to) (a request's
// issue precedes its completion by at most 30 s), the 3 with the most
// bytes: tid, pid, comm, requests, bytes.
Status VisitRequestsCompleted(Db& db, int64_t run_id, int64_t from, int64_t to, const RowFn& row);
// Reads of files' pages (file_ino != 0) by issue time: file dev, file ino,
// ts, dur, bytes.
Status VisitFileReads(Db& db, int64_t run_id, const RowFn& row);
// Every request by device, then time: dev, ts, dur, op name, bytes,
// flags, tid, comm, file path (''), traced (1 if for a traced task).
Status VisitRequestsByDevice(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// Per device, by device: dev, whole requests (partial completions are
// parts of one), bytes, rows.
Status VisitDeviceTotals(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// Every request by time, longer first at equal ts: ts, dur, dev, op name,
// bytes, sector, flags, error, tid, comm, file path (''), queue ns (-1),
// traced. Stepped by the caller.
Result<CachedStmt> OpenRequestsByTime(Db& db, const std::string& what, int64_t run_id);
// The same requests in the same order, only ts, dur, dev.
Status VisitRequestTimes(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// The latency histograms by device, partition, op, slot: dev, partition
// dev, op, op name (''), slot, count, sum ns.
Status VisitLatencyHistograms(Db& db, int64_t run_id, const RowFn& row);

}  // namespace syspgo::data
