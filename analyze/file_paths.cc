//===- file_paths.cc - which path a (device, inode) had at a given time --===//
// Opens are far fewer than reads and writes, so all of a run's successful
// opens are held in memory, grouped by inode; a lookup is a binary search.
#include "analyze/file_paths.h"

#include <algorithm>
#include <cctype>

#include "analyze/data/cpu_tables.h"
#include "analyze/data/paths.h"
#include "common/util.h"

namespace syspgo {
namespace {

// `rel` (relative, as a program passed it) made absolute with the
// directories of `abs`, a path of the same file the kernel resolved: its
// last as many components as `rel` has are replaced by `rel`'s.
std::string Absolute(const std::string& rel, const std::string& abs) {
  if (rel.empty() || rel[0] == '/') return rel;
  if (abs.empty()) return rel;
  std::vector<std::string> a = Split(abs, '/'), r;
  for (std::string& c : Split(rel, '/'))
    if (!c.empty() && c != ".") r.push_back(std::move(c));  // "./ckpt" names one component
  if (r.size() >= a.size()) return rel;
  a.resize(a.size() - r.size());
  std::string out;
  for (const std::string& c : a) out += c.empty() ? "" : "/" + c;
  for (const std::string& c : r) out += "/" + c;
  return out;
}

}  // namespace

Result<FilePaths> FilePaths::Load(Db& db, int64_t run_id) {
  FilePaths fp;
  auto files = data::ReadFileTable(db, run_id);
  if (!files) return files.error();
  fp.first_ = std::move(*files);
  // Files the kernel mapped without an open the run saw (the executable and
  // interpreter of an exec): the cpu group recorded their mappings' paths.
  SYSPGO_TRY(VisitMappedFiles(db, run_id, [&](const MappedFile& m) { fp.first_.try_emplace({m.dev, m.ino}, m.path); }));
  SYSPGO_TRY(data::VisitSuccessfulOpens(db, run_id, [&](const data::FileOpen& o) {
    Key k{o.dev, o.ino};
    auto f = fp.first_.find(k);
    fp.opens_[k].emplace_back(o.ts, Absolute(o.path, f == fp.first_.end() ? "" : f->second));
  }));
  return fp;
}

std::string FilePaths::At(uint64_t dev, uint64_t ino, int64_t ts) const {
  auto it = opens_.find({dev, ino});
  if (it != opens_.end() && !it->second.empty()) {
    const auto& v = it->second;
    auto after = std::upper_bound(v.begin(), v.end(), ts, [](int64_t t, const auto& o) { return t < o.first; });
    return after == v.begin() ? after->second : std::prev(after)->second;
  }
  auto f = first_.find({dev, ino});
  return f == first_.end() ? "" : f->second;
}

std::string PathShape(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (!isdigit(static_cast<unsigned char>(path[i]))) {
      out += path[i];
      continue;
    }
    out += "<N>";
    while (i + 1 < path.size() && isdigit(static_cast<unsigned char>(path[i + 1]))) ++i;
  }
  return out;
}

std::string CommonShape(const std::vector<std::string>& paths) {
  if (paths.empty()) return "";
  std::vector<std::vector<std::string>> split;
  for (const std::string& p : paths) split.push_back(Split(p, '/'));
  std::string out;
  for (size_t i = 0; i < split[0].size(); ++i) {
    bool same = true;
    for (const auto& s : split) same = same && s.size() == split[0].size() && s[i] == split[0][i];
    out += (i ? "/" : "") + (same ? split[0][i] : PathShape(split[0][i]));
  }
  return out;
}

}  // namespace syspgo
