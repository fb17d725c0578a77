//===- access.cc - the touches of file bytes a run made -------------------===//
#include "analyze/data/access.h"

#include "analyze/file_calls.h"

namespace syspgo::data {
namespace {

// {table}: see WithRunTables.
const std::string kTouchesSql = R"sql(
SELECT ts, pid, dev, ino, pos, ret, 0 FROM file_io
 WHERE run_id = ?1 AND ts >= ?2 AND nr IN ()sql" + SqlList(kReadCalls) + ") AND kind = " +
                                  std::to_string(SYSPGO_S_IFREG) + R"sql( AND ret > 0 AND pos >= 0
UNION ALL
SELECT ts, pid, dev, ino, pgoff * 4096, 4096, 1 FROM {page_fault}
 WHERE run_id = ?1 AND ts >= ?2 AND ino != 0 AND pgoff >= 0
UNION ALL
SELECT ts, pid, dev, ino, around_first * 4096, (around_last - around_first + 1) * 4096, 2 FROM {page_fault}
 WHERE run_id = ?1 AND ts >= ?2 AND ino != 0 AND around_first >= 0 AND around_last >= around_first
UNION ALL
SELECT ts, pid, dev, ino, idx * 4096, pages * 4096, 3 FROM {page_cache}
 WHERE run_id = ?1 AND ts >= ?2 AND op = 1 AND (why & 1) != 0
UNION ALL
SELECT ts, pid, dev, ino, idx * 4096, 4096, 3 FROM page_cache_page
 WHERE run_id = ?1 AND ts >= ?2 AND (why & 1) != 0
)sql";

const std::string kWritesSql = R"sql(
SELECT ts, dur, dev, ino, pos, ret FROM file_io
 WHERE run_id = ?1 AND kind = )sql" + std::to_string(SYSPGO_S_IFREG) + " AND nr IN (" + SqlList(kWriteCalls) +
                                  R"sql() AND ret > 0 AND pos >= 0
 ORDER BY ts
)sql";

}  // namespace

Status VisitTouches(Db& db, int64_t run_id, int64_t since, const RowFn& row) {
  return Visit(db, "", WithRunTables(db, kTouchesSql), {run_id, since}, row);
}

Status VisitWrites(Db& db, int64_t run_id, const RowFn& row) {
  return Visit(db, "the run's writes to files", kWritesSql, {run_id}, row);
}

}  // namespace syspgo::data
