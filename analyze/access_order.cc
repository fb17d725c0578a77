//===- access_order.cc - which bytes of which files a run touched, and when ===//
#include "analyze/access_order.h"
#include "analyze/sample_set.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

namespace syspgo {
namespace {

// Each absolute file the run exec'd, with its ELF interpreter as the file
// names it now ("" for none, or if it cannot be read).
std::map<std::string, std::string> ExecInterpreters(Db& db, int64_t run_id) {
  std::map<std::string, std::string> out;
  auto st = db.Prepare("SELECT DISTINCT filename FROM exec WHERE run_id = ?1");
  if (!st) return out;
  st->Bind(1, run_id);
  Status err;
  while (st->Step(&err)) {
    std::string exe = st->Text(0);
    if (exe.empty() || exe[0] != '/') continue;
    auto interp = ReadElfInterpreter(exe);
    out[exe] = interp ? *interp : "";
  }
  return out;
}

// Names for files the run touched but never opened: what the kernel maps
// at exec without an open call, the executable and its ELF interpreter.
// Each exec's file and interpreter is looked up now, and a match on
// (dev, ino) names it by its real path. A file replaced since the run no
// longer matches and stays unnamed (a plan would not read it blindly).
std::map<std::pair<uint64_t, uint64_t>, std::string> ExecNames(const std::map<std::string, std::string>& execs) {
  std::map<std::pair<uint64_t, uint64_t>, std::string> out;
  std::vector<std::string> candidates;
  for (const auto& [exe, interp] : execs) {
    candidates.push_back(exe);
    if (!interp.empty()) candidates.push_back(interp);
  }
  for (const std::string& c : candidates) {
    struct stat sb {};
    char real[PATH_MAX];
    if (stat(c.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode) || !realpath(c.c_str(), real)) continue;
    out.emplace(std::make_pair(static_cast<uint64_t>(sb.st_dev), static_cast<uint64_t>(sb.st_ino)), real);
  }
  return out;
}

// Whether (dev, ino) is a block device's own page cache, where file systems
// keep the metadata they read (directories, inode tables, extent blocks):
// its inode lives on the kernel's internal bdev file system (an anonymous
// device, major 0), numbered by the device's kernel dev_t (major << 20 |
// minor), and the device is here now.
bool IsBlockDeviceCache(uint64_t dev, uint64_t ino) {
  if (major(static_cast<dev_t>(dev)) != 0 || ino == 0) return false;
  std::string sys = "/sys/dev/block/" + std::to_string(ino >> 20) + ":" + std::to_string(ino & 0xfffff);
  struct stat sb {};
  return stat(sys.c_str(), &sb) == 0;
}

// Paths: opens (file) first, then the mappings the cpu group saw. The root
// process runs syspgo's own code between its release and its exec (it is
// the collector's fork): what it touches then (pages of the syspgo binary)
// is not the command's. The exec itself also comes before its event, which
// fires once the program is loaded: those touches (last column) are kept
// for the files it loads (see FileAccessOrder). `start` is MATERIALIZED:
// inlined, its exec subquery ran once per touch, and on a run of 530k reads
// the query took 1.7 s instead of 0.8 s.
constexpr char kTouchesSql[] = R"sql(
WITH start AS MATERIALIZED (SELECT COALESCE(command_start_ts, 0) AS t0, target_pid AS root,
                      COALESCE((SELECT MIN(ts) FROM exec WHERE run_id = ?1 AND pid = run.target_pid), 0) AS root_exec
               FROM run WHERE id = ?1),
paths AS (
  SELECT dev, ino, MIN(path) AS path FROM (
    SELECT dev, ino, path FROM file WHERE run_id = ?1
    UNION ALL
    SELECT dev, ino, path FROM mapping WHERE run_id = ?1 AND ino != 0 AND path LIKE '/%'
  ) GROUP BY dev, ino
),
touches AS (
  SELECT ts, pid, dev, ino, pos AS off, ret AS len, 'r' AS source FROM file_io
   WHERE run_id = ?1 AND nr IN (0, 17, 19, 295, 327) AND kind = 32768 AND ret > 0 AND pos >= 0
  UNION ALL
  SELECT ts, pid, dev, ino, pgoff * 4096, 4096, 'f' FROM page_fault
   WHERE run_id = ?1 AND ino != 0 AND pgoff >= 0
  UNION ALL
  SELECT ts, pid, dev, ino, around_first * 4096, (around_last - around_first + 1) * 4096, 'a' FROM page_fault
   WHERE run_id = ?1 AND ino != 0 AND around_first >= 0 AND around_last >= around_first
  UNION ALL
  SELECT ts, pid, dev, ino, idx * 4096, pages * 4096, 'p' FROM page_cache
   WHERE run_id = ?1 AND op = 1 AND (why & 1) != 0
)
SELECT MAX(t.ts - s.t0, 0), t.dev, t.ino, t.off, t.len, t.source, COALESCE(p.path, ''),
       t.pid = s.root AND t.ts < s.root_exec
FROM touches t CROSS JOIN start s LEFT JOIN paths p ON p.dev = t.dev AND p.ino = t.ino
WHERE t.ts >= s.t0
ORDER BY t.ts, t.dev, t.ino, t.off
)sql";

// Opens and lookups (stat, access, readlink, failed execs) that walked
// their whole path: those that found something, and those that failed on a
// missing (ENOENT), non-directory (ENOTDIR) or forbidden (EACCES) name, or
// (readlink) on a name that is there but no symbolic link (EINVAL); and
// every exec, whose ELF interpreter the kernel looks up too (no syscall
// shows that one).
constexpr char kLookupsSql[] = R"sql(
WITH start AS (SELECT COALESCE(command_start_ts, 0) AS t0 FROM run WHERE id = ?1)
SELECT MAX(l.ts - s.t0, 0), l.path, l.is_exec FROM (
  SELECT ts, path, 0 AS is_exec FROM (
    SELECT ts, path, nr, ret FROM file_open WHERE run_id = ?1
    UNION ALL
    SELECT ts, path, nr, ret FROM file_lookup WHERE run_id = ?1
  ) WHERE ret >= 0 OR ret IN (-2, -13, -20) OR (nr IN (89, 267) AND ret = -22)
  UNION ALL
  SELECT ts, filename, 1 FROM exec WHERE run_id = ?1
) l CROSS JOIN start s
WHERE l.ts >= s.t0 AND l.path != ''
ORDER BY l.ts, l.path
)sql";

}  // namespace

Result<AccessOrder> FileAccessOrder(Db& db, int64_t run_id) {
  auto st = db.Prepare(kTouchesSql);
  if (!st) return st.error();
  st->Bind(1, run_id);
  AccessOrder out;
  auto execs = ExecInterpreters(db, run_id);
  auto exec_files = ExecNames(execs);
  std::map<std::pair<uint64_t, uint64_t>, uint32_t> file_of;  // (dev, ino) -> index in out.files
  Status err;
  while (st->Step(&err)) {
    uint64_t dev = st->Int(1), ino = st->Int(2);
    // Before the root's exec: only what the exec loaded is the command's.
    // Loading reads the program's and its interpreter's headers, and
    // zeroes the tail of the program's last data page (a kernel-mode
    // fault, seen as that page's page-cache add): left out, python3.11's
    // last page cost every replay a major fault and a 2 MiB readahead.
    if (st->Int(7) && !exec_files.count({dev, ino})) continue;
    auto [it, fresh] = file_of.try_emplace({dev, ino}, static_cast<uint32_t>(out.files.size()));
    if (fresh) out.files.push_back({st->Text(6), dev, ino, exec_files.count({dev, ino}) != 0});
    FileTouch t;
    t.file = it->second;
    t.ts_ns = st->Int(0);
    t.offset = st->Int(3);
    t.length = st->Int(4);
    t.source = st->Text(5)[0];
    (t.source == 'r' ? out.reads : t.source == 'f' ? out.faults : t.source == 'a' ? out.around : out.additions)++;
    out.touches.push_back(t);
  }
  if (!err.ok()) return err.error();
  // Files no open named: an exec's file or interpreter gets its path;
  // a block device's own cache is no file a plan reads (its lookups read
  // it again); the rest stay unnamed and their touches are left out.
  std::vector<uint32_t> kept(out.files.size(), UINT32_MAX);
  std::vector<TouchedFile> files;
  std::vector<std::string> unnamed;
  for (uint32_t i = 0; i < out.files.size(); ++i) {
    TouchedFile& f = out.files[i];
    if (f.path.empty()) {
      if (auto e = exec_files.find({f.dev, f.ino}); e != exec_files.end()) {
        f.path = e->second;
      } else {
        if (!IsBlockDeviceCache(f.dev, f.ino)) unnamed.push_back(std::to_string(f.dev) + ":" + std::to_string(f.ino));
        continue;
      }
    }
    kept[i] = static_cast<uint32_t>(files.size());
    files.push_back(std::move(f));
  }
  size_t n = 0;
  for (const FileTouch& t : out.touches)
    if (kept[t.file] != UINT32_MAX) {
      out.touches[n] = t;
      out.touches[n++].file = kept[t.file];
    }
  out.touches.resize(n);
  out.touches.shrink_to_fit();
  out.files = std::move(files);
  std::sort(unnamed.begin(), unnamed.end());
  out.unnamed = std::move(unnamed);
  auto lk = db.Prepare(kLookupsSql);
  if (!lk) return lk.error();
  lk->Bind(1, run_id);
  while (lk->Step(&err)) {
    PathLookup l{lk->Text(1), static_cast<uint64_t>(lk->Int(0))};
    if (auto e = execs.find(l.path); lk->Int(2) && e != execs.end() && !e->second.empty())
      out.lookups.push_back({e->second, l.ts_ns});
    out.lookups.push_back(std::move(l));
  }
  if (!err.ok()) return err.error();
  return out;
}

bool RecordedWithoutReadahead(Db& db, int64_t run_id) {
  auto off = db.QueryInt("SELECT COALESCE(json_extract(settings_json, '$.no_readahead'), 0) FROM run WHERE id = " +
                         std::to_string(run_id));
  return off.ok() && *off;
}

}  // namespace syspgo
