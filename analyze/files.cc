//===- files.cc - per-file I/O summary of a run --------------------------===//
#include "analyze/files.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyze/data/file_calls.h"
#include "analyze/data/paths.h"
#include "analyze/file_calls.h"
#include "analyze/run.h"

namespace syspgo {
namespace {

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
  struct Acc {
    FileStats f;
    int64_t kind = 0, worst_nr = 0;
  };
  std::unordered_map<std::pair<uint64_t, uint64_t>, Acc, PairHash> files;
  // The run's file calls, summed per file in one pass in a hash map (see
  // data::VisitFileIoSums).
  SYSPGO_TRY(data::VisitFileIoSums(db, q.run_id, *tier == Tier::kLean, q.all_kinds, [&](Stmt& st) {
    std::pair<uint64_t, uint64_t> key{static_cast<uint64_t>(st.Int(0)), static_cast<uint64_t>(st.Int(1))};
    int64_t kind = st.Int(2), nr = st.Int(3), calls = st.Int(4), bytes = st.Int(5), ns = st.Int(6),
            worst = st.Int(7);
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
  }));
  std::map<std::pair<uint64_t, uint64_t>, std::string> paths;
  std::map<int64_t, std::string> names;
  if (!files.empty()) {
    auto ps = data::ReadFileTable(db, q.run_id);
    if (!ps) return ps.error();
    paths = std::move(*ps);
    auto ns = data::ReadSyscallNames(db);
    if (!ns) return ns.error();
    names = std::move(*ns);
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
