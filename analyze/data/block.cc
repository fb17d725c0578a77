//===- block.cc - the block requests of a run, as rows -------------------===//
#include "analyze/data/block.h"

namespace syspgo::data {
namespace {

// ?2 bounds how early a request may have been issued, so the time index is used.
constexpr char kInFlightSql[] = R"sql(
SELECT b.ts, b.dur, b.bytes, COALESCE(o.name, 'op ' || b.op), b.flags, b.tid, b.comm
FROM block_rq AS b LEFT JOIN block_op AS o ON o.run_id = b.run_id AND o.op = b.op
WHERE b.run_id = ?1 AND b.ts >= ?2 AND b.ts < ?3 AND b.ts + b.dur > ?4
  AND (b.tid = ?5 OR (?7 != 0 AND b.file_dev = ?6 AND b.file_ino = ?7))
ORDER BY b.ts, b.sector
)sql";
// By who made them (the task whose bio it was; for writeback and the
// journal a kworker or jbd2).
constexpr char kCompletedSql[] =
    "SELECT tid, pid, comm, COUNT(*) AS n, SUM(bytes) AS b FROM block_rq WHERE run_id = ?1 "
    "AND ts BETWEEN ?2 - 30000000000 AND ?3 AND ts + dur BETWEEN ?2 AND ?3 AND tid != 0 "
    "GROUP BY tid, pid, comm ORDER BY b DESC, n DESC, tid LIMIT 3";
// file_dev is the file's st_dev.
constexpr char kFileReadsSql[] = R"sql(
SELECT b.file_dev, b.file_ino, b.ts, b.dur, b.bytes
FROM block_rq AS b LEFT JOIN block_op AS o ON o.run_id = b.run_id AND o.op = b.op
WHERE b.run_id = ?1 AND b.file_ino != 0 AND COALESCE(o.name, CASE b.op WHEN 0 THEN 'read' END) = 'read'
ORDER BY b.ts, b.sector
)sql";
constexpr char kByDeviceSql[] = R"sql(
SELECT b.dev, b.ts, b.dur, COALESCE(o.name, 'op ' || b.op), b.bytes, b.flags, b.tid, b.comm,
       COALESCE(f.path, ''), b.target
FROM block_rq b
LEFT JOIN block_op o ON o.run_id = b.run_id AND o.op = b.op
LEFT JOIN file f ON f.run_id = b.run_id AND f.dev = b.file_dev AND f.ino = b.file_ino
WHERE b.run_id = ?1
ORDER BY b.dev, b.ts
)sql";
// The histogram the kernel keeps counts whole requests, and so do these.
constexpr char kDeviceTotalsSql[] = R"sql(
SELECT dev, SUM(CASE WHEN flags & 512 THEN 0 ELSE 1 END), SUM(bytes), COUNT(*)
FROM block_rq
WHERE run_id = ?1
GROUP BY dev
ORDER BY dev
)sql";
constexpr char kByTimeSql[] = R"sql(
SELECT b.ts, b.dur, b.dev, COALESCE(o.name, 'op ' || b.op), b.bytes, b.sector, b.flags, b.error, b.tid, b.comm,
       COALESCE(f.path, ''), COALESCE(b.queue_dur, -1), b.target
FROM block_rq b
LEFT JOIN block_op o ON o.run_id = b.run_id AND o.op = b.op
LEFT JOIN file f ON f.run_id = b.run_id AND f.dev = b.file_dev AND f.ino = b.file_ino
WHERE b.run_id = ?1
ORDER BY b.ts, b.dur DESC
)sql";
constexpr char kTimesSql[] = R"sql(
SELECT ts, dur, dev
FROM block_rq
WHERE run_id = ?1
ORDER BY ts, dur DESC
)sql";
constexpr char kHistSql[] =
    "SELECT h.dev, h.part_dev, h.op, COALESCE(o.name, ''), h.slot, h.count, h.sum_ns "
    "FROM block_latency_hist AS h LEFT JOIN block_op AS o ON o.run_id = h.run_id AND o.op = h.op "
    "WHERE h.run_id = ?1 ORDER BY h.dev, h.part_dev, h.op, h.slot";

}  // namespace

Status VisitRequestsInFlight(Db& db, int64_t run_id, int64_t issued_after, int64_t start, int64_t end, int64_t tid,
                             std::pair<uint64_t, uint64_t> file, const RowFn& row) {
  return Visit(db, "", kInFlightSql,
               {run_id, issued_after, end, start, tid, static_cast<int64_t>(file.first),
                static_cast<int64_t>(file.second)},
               row);
}

Status VisitRequestsCompleted(Db& db, int64_t run_id, int64_t from, int64_t to, const RowFn& row) {
  return Visit(db, "", kCompletedSql, {run_id, from, to}, row);
}

Status VisitFileReads(Db& db, int64_t run_id, const RowFn& row) { return Visit(db, "", kFileReadsSql, {run_id}, row); }

Status VisitRequestsByDevice(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kByDeviceSql, {run_id}, row);
}

Status VisitDeviceTotals(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kDeviceTotalsSql, {run_id}, row);
}

Result<CachedStmt> OpenRequestsByTime(Db& db, const std::string& what, int64_t run_id) {
  return Open(db, what, kByTimeSql, {run_id});
}

Status VisitRequestTimes(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kTimesSql, {run_id}, row);
}

Status VisitLatencyHistograms(Db& db, int64_t run_id, const RowFn& row) {
  return Visit(db, "", kHistSql, {run_id}, row);
}

}  // namespace syspgo::data
