//===- files.cc - per-file I/O summary of a run --------------------------===//
#include "analyze/files.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyze/file_calls.h"
#include "analyze/run.h"

namespace syspgo {
namespace {

// The run's file calls, summed per file in one pass in a hash map. SQL's
// GROUP BY sorted every call (twice: once more for each file's slowest
// call), 3.9 s of `analyze files` on a run of 2.7M calls. Both queries give
// (dev, ino, kind, nr, calls, bytes, total ns, slowest ns): the full tier
// has a row per call, the lean tier a row per (file, syscall).
const std::string kCallsSql = R"sql(
SELECT dev, ino, kind, nr, 1, MAX(ret, 0), dur, dur
FROM file_io
WHERE run_id = ?1 AND dev != 0 AND (?2 OR kind = )sql" + std::to_string(SYSPGO_S_IFREG) + ")";
const std::string kTotalsSql = R"sql(
SELECT dev, ino, kind, nr, calls, bytes, total_ns, max_ns
FROM file_io_total
WHERE run_id = ?1 AND dev != 0 AND (?2 OR kind = )sql" + std::to_string(SYSPGO_S_IFREG) + R"sql()
ORDER BY first_ts
)sql";
constexpr char kPathsSql[] = "SELECT dev, ino, path FROM file WHERE run_id = ?1";
constexpr char kNamesSql[] = "SELECT nr, name FROM syscall_name";

struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& k) const {
    return std::hash<uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second);
  }
};

}  // namespace

std::string FileKindName(int64_t mode) {
  switch (mode & SYSPGO_S_IFMT) {
    case SYSPGO_S_IFREG: return "file";
    case SYSPGO_S_IFIFO: return "pipe";
    case SYSPGO_S_IFSOCK: return "socket";
    case SYSPGO_S_IFCHR: return "chardev";
    case SYSPGO_S_IFBLK: return "blockdev";
    case SYSPGO_S_IFDIR: return "dir";
    case SYSPGO_S_IFLNK: return "symlink";
  }
  return "anon";
}

Result<std::vector<FileStats>> FileSummary(Db& db, const FilesQuery& q) {
  auto tier = RecordingTier(db, q.run_id, "fileio");
  if (!tier) return tier.error();
  auto st = db.Prepare(*tier == Tier::kLean ? kTotalsSql : kCallsSql);
  if (!st) return st.error();
  st->Bind(1, q.run_id).Bind(2, int64_t{q.all_kinds});
  struct Acc {
    FileStats f;
    int64_t kind = 0, worst_nr = 0;
  };
  std::unordered_map<std::pair<uint64_t, uint64_t>, Acc, PairHash> files;
  Status err;
  while (st->Step(&err)) {
    std::pair<uint64_t, uint64_t> key{static_cast<uint64_t>(st->Int(0)), static_cast<uint64_t>(st->Int(1))};
    int64_t kind = st->Int(2), nr = st->Int(3), calls = st->Int(4), bytes = st->Int(5), ns = st->Int(6),
            worst = st->Int(7);
    auto [it, fresh] = files.try_emplace(key);
    Acc& a = it->second;
    if (fresh) {
      a.f.dev = key.first;
      a.f.ino = key.second;
      a.kind = kind;
      a.worst_nr = nr;
      a.f.worst_ns = worst;
    }
    a.kind = std::max(a.kind, kind);
    if (IsReadCall(nr)) {
      a.f.reads += calls;
      a.f.read_bytes += bytes;
    } else if (IsWriteCall(nr)) {
      a.f.writes += calls;
      a.f.write_bytes += bytes;
    } else if (IsSyncCall(nr)) {
      a.f.syncs += calls;
    }
    a.f.total_ns += ns;
    if (worst > a.f.worst_ns) {  // the first of equally slow calls
      a.f.worst_ns = worst;
      a.worst_nr = nr;
    }
  }
  if (!err.ok()) return err.error();
  std::map<std::pair<uint64_t, uint64_t>, std::string> paths;
  std::map<int64_t, std::string> names;
  if (!files.empty()) {
    auto ps = db.Prepare(kPathsSql);
    if (!ps) return ps.error();
    ps->Bind(1, q.run_id);
    while (ps->Step(&err))
      if (files.count({static_cast<uint64_t>(ps->Int(0)), static_cast<uint64_t>(ps->Int(1))}))
        paths[{static_cast<uint64_t>(ps->Int(0)), static_cast<uint64_t>(ps->Int(1))}] = ps->Text(2);
    if (!err.ok()) return err.error();
    auto ns = db.Prepare(kNamesSql);
    if (!ns) return ns.error();
    while (ns->Step(&err)) names[ns->Int(0)] = ns->Text(1);
    if (!err.ok()) return err.error();
  }
  std::vector<FileStats> out;
  out.reserve(files.size());
  for (auto& [key, a] : files) {
    FileStats& f = out.emplace_back(std::move(a.f));
    auto p = paths.find(key);
    f.path = p != paths.end() ? p->second : "";
    f.kind = FileKindName(a.kind);
    // The lean tier counts pipes and sockets per kind, as inode 0: "pipe:[*]".
    if (f.path.empty()) f.path = f.kind + ":[" + (f.ino ? std::to_string(f.ino) : "*") + "]";
    auto n = names.find(a.worst_nr);
    f.worst_syscall = n != names.end() ? n->second : std::to_string(a.worst_nr);
  }
  // Most latency first.
  std::sort(out.begin(), out.end(), [](const FileStats& a, const FileStats& b) {
    return std::tie(b.total_ns, a.dev, a.ino) < std::tie(a.total_ns, b.dev, b.ino);
  });
  if (q.limit && out.size() > q.limit) out.resize(q.limit);
  return out;
}

}  // namespace syspgo
