//===- files.cc - per-file I/O summary of a run --------------------------===//
#include "analyze/files.h"

namespace syspgo {
namespace {

// Syscall numbers by direction (x86_64; names in syscall_name).
constexpr char kFilesSql[] = R"sql(
WITH ops AS (
  SELECT dev, ino, kind, nr, dur, ret,
         nr IN (0, 17, 19, 295, 327) AS is_read,
         nr IN (1, 18, 20, 296, 328) AS is_write,
         nr IN (74, 75, 277) AS is_sync
  FROM file_io
  WHERE run_id = ?1 AND dev != 0 AND (?2 OR kind = 32768)
),
per_file AS (
  SELECT dev, ino, MAX(kind) AS kind,
         SUM(is_read) AS reads, SUM(CASE WHEN is_read AND ret > 0 THEN ret ELSE 0 END) AS read_bytes,
         SUM(is_write) AS writes, SUM(CASE WHEN is_write AND ret > 0 THEN ret ELSE 0 END) AS write_bytes,
         SUM(is_sync) AS syncs, SUM(dur) AS total_ns, MAX(dur) AS worst_ns
  FROM ops
  GROUP BY dev, ino
),
-- The syscall of each file's slowest call. With max() the only aggregate,
-- SQLite takes the bare column (nr) from the row that has the maximum: one
-- pass over the calls, where a subquery per file read them all again for
-- each file (seconds for a run of 500k reads).
worst AS (
  SELECT dev, ino, nr, MAX(dur) FROM ops GROUP BY dev, ino
)
SELECT p.dev, p.ino, COALESCE(f.path, ''), p.kind, p.reads, p.read_bytes, p.writes, p.write_bytes, p.syncs,
       p.total_ns, p.worst_ns, COALESCE(n.name, CAST(w.nr AS TEXT))
FROM per_file p
JOIN worst w ON w.dev = p.dev AND w.ino = p.ino
LEFT JOIN syscall_name n ON n.nr = w.nr
LEFT JOIN file f ON f.run_id = ?1 AND f.dev = p.dev AND f.ino = p.ino
ORDER BY p.total_ns DESC, p.dev, p.ino
)sql";

}  // namespace

std::string FileKindName(int64_t mode) {
  switch (mode & 0170000) {
    case 0100000: return "file";
    case 0010000: return "pipe";
    case 0140000: return "socket";
    case 0020000: return "chardev";
    case 0060000: return "blockdev";
    case 0040000: return "dir";
    case 0120000: return "symlink";
  }
  return "anon";
}

Result<std::vector<FileStats>> FileSummary(Db& db, const FilesQuery& q) {
  auto st = db.Prepare(kFilesSql);
  if (!st) return st.error();
  st->Bind(1, q.run_id).Bind(2, int64_t{q.all_kinds});
  std::vector<FileStats> out;
  Status err;
  while (st->Step(&err)) {
    FileStats f;
    f.dev = st->Int(0);
    f.ino = st->Int(1);
    f.path = st->Text(2);
    f.kind = FileKindName(st->Int(3));
    if (f.path.empty()) f.path = f.kind + ":[" + std::to_string(f.ino) + "]";
    f.reads = st->Int(4);
    f.read_bytes = st->Int(5);
    f.writes = st->Int(6);
    f.write_bytes = st->Int(7);
    f.syncs = st->Int(8);
    f.total_ns = st->Int(9);
    f.worst_ns = st->Int(10);
    f.worst_syscall = st->Text(11);
    out.push_back(std::move(f));
    if (q.limit && out.size() >= q.limit) break;
  }
  if (!err.ok()) return err.error();
  return out;
}

}  // namespace syspgo
