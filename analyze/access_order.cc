//===- access_order.cc - which bytes of which files a run touched, and when ===//
#include "analyze/access_order.h"
#include "analyze/data/access.h"
#include "analyze/data/paths.h"
#include "analyze/run.h"
#include "analyze/sample_set.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace syspgo {
namespace {

// What collect found of the files the run's execs mapped without an open
// call, the executables and their ELF interpreters: each exec'd name's
// interpreter, and each such file's real path by (dev, ino).
struct ExecFiles {
  std::map<std::string, std::string> interpreter;                   // exec'd name -> PT_INTERP ("" none)
  std::map<std::pair<uint64_t, uint64_t>, std::string> path_of;    // (dev, ino) -> real path
};

Result<ExecFiles> ReadExecFiles(Db& db, int64_t run_id) {
  auto files = data::ReadExecFiles(db, run_id);
  if (!files) return files.error();
  ExecFiles out;
  for (const data::ExecFile& f : *files) {
    out.interpreter[f.filename] = f.interpreter;
    out.path_of.emplace(std::make_pair(f.dev, f.ino), f.path);
  }
  return out;
}

// Whether (dev, ino) is a block device's own page cache, where file systems
// keep the metadata they read (directories, inode tables, extent blocks):
// its inode lives on the kernel's internal bdev file system (an anonymous
// device, major 0), numbered by the device's kernel dev_t (major << 20 |
// minor), and the machine had that device when the run started.
bool IsBlockDeviceCache(uint64_t dev, uint64_t ino, const std::set<std::pair<uint32_t, uint32_t>>& devices) {
  if (major(static_cast<dev_t>(dev)) != 0 || ino == 0) return false;
  return devices.count({static_cast<uint32_t>(ino >> 20), static_cast<uint32_t>(ino & 0xfffff)}) != 0;
}

// FileTouch::source of each arm of data::VisitTouches.
constexpr char kSources[] = "rfap";

// Sorts the touches in time order; at the same time by file and offset,
// then by layer (read, fault, fault-around, addition). Touches equal in all
// of that and in length are alike, so the order is the same every time.
// Files are then numbered in the order of their first touch.
void SortInFirstTouchOrder(AccessOrder& out) {
  auto rank = [](char source) { return std::strchr(kSources, source) - kSources; };
  const std::vector<TouchedFile>& f = out.files;
  std::sort(out.touches.begin(), out.touches.end(), [&](const FileTouch& a, const FileTouch& b) {
    if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
    if (a.file != b.file) {
      if (f[a.file].dev != f[b.file].dev) return f[a.file].dev < f[b.file].dev;
      return f[a.file].ino < f[b.file].ino;
    }
    if (a.offset != b.offset) return a.offset < b.offset;
    if (a.source != b.source) return rank(a.source) < rank(b.source);
    return a.length < b.length;
  });
  std::vector<uint32_t> order(out.files.size(), UINT32_MAX);
  std::vector<TouchedFile> files;
  files.reserve(out.files.size());
  for (FileTouch& t : out.touches) {
    if (order[t.file] == UINT32_MAX) {
      order[t.file] = static_cast<uint32_t>(files.size());
      files.push_back(std::move(out.files[t.file]));
    }
    t.file = order[t.file];
  }
  out.files = std::move(files);
}

// Files no open named: an exec's file or interpreter gets its path; a
// block device's own cache is no file a plan reads (its lookups read it
// again); the rest stay unnamed (out.unnamed) and their touches are left
// out.
void KeepNamedFiles(const std::map<std::pair<uint64_t, uint64_t>, std::string>& exec_files,
                    const std::set<std::pair<uint32_t, uint32_t>>& devices, AccessOrder& out) {
  std::vector<uint32_t> kept(out.files.size(), UINT32_MAX);
  std::vector<TouchedFile> files;
  std::vector<std::string> unnamed;
  for (uint32_t i = 0; i < out.files.size(); ++i) {
    TouchedFile& f = out.files[i];
    if (f.path.empty()) {
      if (auto e = exec_files.find({f.dev, f.ino}); e != exec_files.end()) {
        f.path = e->second;
      } else {
        if (!IsBlockDeviceCache(f.dev, f.ino, devices))
          unnamed.push_back(std::to_string(f.dev) + ":" + std::to_string(f.ino));
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
}

}  // namespace

Result<AccessOrder> FileAccessOrder(Db& db, int64_t run_id) {
  AccessOrder out;
  auto window = ReadRunWindow(db, run_id);
  if (!window) return window.error();
  const int64_t t0 = window->command_start_ns, root = window->target_pid;
  // The exec of the command's root process (0 if none). The root runs
  // syspgo's own code between its release and its exec (it is the
  // collector's fork): what it touches then (pages of the syspgo binary) is
  // not the command's. The exec itself also comes before its event, which
  // fires once the program is loaded: those touches are kept for the files
  // it loads (see below).
  auto root_exec = data::FirstExecTs(db, run_id, root);
  if (!root_exec) return root_exec.error();
  // Paths: the file table's, then the mappings the cpu group saw.
  auto paths = data::ReadFileAndMappedPaths(db, run_id);
  if (!paths) return paths.error();
  auto execs = ReadExecFiles(db, run_id);
  if (!execs) return execs.error();
  const auto& exec_files = execs->path_of;
  auto devices = data::ReadBlockDevices(db, run_id);
  if (!devices) return devices.error();
  // Files here are numbered as the scan meets them, and renumbered in
  // first-touch order once the touches are sorted.
  std::map<std::pair<uint64_t, uint64_t>, uint32_t> file_of;  // (dev, ino) -> index in out.files
  SYSPGO_TRY(data::VisitTouches(db, run_id, t0, [&](Stmt& st) {
    uint64_t dev = st.Int(2), ino = st.Int(3);
    int64_t ts = st.Int(0);
    // Before the root's exec: only what the exec loaded is the command's.
    // Loading reads the program's and its interpreter's headers, and
    // zeroes the tail of the program's last data page (a kernel-mode
    // fault, seen as that page's page-cache add): left out, a plan would
    // leave that page to a major fault and its readahead at every replay.
    if (st.Int(1) == root && ts < *root_exec && !exec_files.count({dev, ino})) return;
    auto [it, fresh] = file_of.try_emplace({dev, ino}, static_cast<uint32_t>(out.files.size()));
    if (fresh) {
      auto p = paths->find({dev, ino});
      out.files.push_back({p != paths->end() ? p->second : "", dev, ino, exec_files.count({dev, ino}) != 0});
    }
    FileTouch t;
    t.file = it->second;
    t.ts_ns = static_cast<uint64_t>(ts - t0);
    t.offset = st.Int(4);
    t.length = st.Int(5);
    t.source = kSources[st.Int(6) & 3];
    (t.source == 'r' ? out.reads : t.source == 'f' ? out.faults : t.source == 'a' ? out.around : out.additions)++;
    out.touches.push_back(t);
  }));
  SortInFirstTouchOrder(out);
  KeepNamedFiles(exec_files, *devices, out);
  SYSPGO_TRY(data::VisitPathWalks(db, run_id, t0, [&](const data::PathWalk& w) {
    PathLookup l{w.path, static_cast<uint64_t>(w.since_ns)};
    auto e = execs->interpreter.find(l.path);
    if (w.is_exec && e != execs->interpreter.end() && !e->second.empty()) out.lookups.push_back({e->second, l.ts_ns});
    out.lookups.push_back(std::move(l));
  }));
  return out;
}

bool RecordedWithoutReadahead(Db& db, int64_t run_id) {
  auto settings = ReadRunSettings(db, run_id);
  return settings.ok() && settings->no_readahead;
}

}  // namespace syspgo
