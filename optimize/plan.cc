//===- plan.cc - prefetch plans: build, merge, store, check files ----------===//
//
// The plan is the contract between a profile and the replayer, so this file
// is strict both ways: what it writes always satisfies the invariants in
// schemas/prefetch_plan.proto, and what it reads is refused whole unless it
// does. A half-read plan would warm the wrong pages and hide the problem.
#include "optimize/plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/util.h"
#include "schemas/prefetch_plan.pb.h"

namespace syspgo {
namespace {

constexpr char kMagic[8] = {'S', 'Y', 'S', 'P', 'G', 'O', 'P', 'F'};
constexpr uint32_t kContainerVersion = 1;
constexpr size_t kHeaderSize = 32;
// Far above any real plan (a million extents take about 20 MB); a header
// announcing more is damaged.
constexpr uint64_t kMaxPlanBytes = 1ULL << 30;
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;
constexpr uint64_t kSampleBlocks = 8;
// Extents stop growing at this size so that a file streamed over the whole
// run does not become one extent stamped with its first touch, which would
// make the replayer read all of it before data needed earlier elsewhere.
constexpr uint64_t kMaxCoalescedExtent = 4ULL << 20;

uint64_t Fnv1a(uint64_t h, const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
  return h;
}

uint64_t PageDown(uint64_t v) { return v / kPlanPageSize * kPlanPageSize; }
uint64_t PageUp(uint64_t v) {
  uint64_t d = PageDown(v);
  return d == v ? v : d + kPlanPageSize;
}

std::string Errno(int e) { return strerror(e); }

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetLe(const std::string& in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

bool TouchOrder(const PlanExtent& a, const PlanExtent& b) {
  return a.first_touch_ns != b.first_touch_ns ? a.first_touch_ns < b.first_touch_ns : a.offset < b.offset;
}

// Disjoint timed pieces -> extents in first-touch order. A piece that starts
// where the file's latest extent ends extends it: the program was reading on
// in sequence, and one larger read is cheaper than many small ones.
// Pieces of one file into extents: pieces that touch, or lie within `gap`
// bytes of each other, become one extent (the gap is read too) that takes
// the earliest first touch of its pieces. A replay so issues a few large
// reads rather than one per page run (a cold start touches thousands of
// runs a few pages long), at the cost of the gap bytes. Extents stop growing
// at kMaxCoalescedExtent so that replay order keeps some meaning.
std::vector<PlanExtent> Coalesce(std::vector<PlanExtent> pieces, uint64_t gap) {
  std::sort(pieces.begin(), pieces.end(),
            [](const PlanExtent& a, const PlanExtent& b) { return a.offset < b.offset; });
  std::vector<PlanExtent> out;
  for (const auto& p : pieces) {
    if (!out.empty()) {
      PlanExtent& b = out.back();
      uint64_t end = b.offset + b.length;
      if (p.offset <= end + gap && p.offset + p.length - b.offset <= kMaxCoalescedExtent) {
        b.length = std::max(end, p.offset + p.length) - b.offset;
        b.first_touch_ns = std::min(b.first_touch_ns, p.first_touch_ns);
        continue;
      }
    }
    out.push_back(p);
  }
  std::sort(out.begin(), out.end(), TouchOrder);
  return out;
}

void SortFiles(std::vector<PlanFile>& files) {
  std::sort(files.begin(), files.end(), [](const PlanFile& a, const PlanFile& b) {
    uint64_t ta = a.extents.front().first_touch_ns, tb = b.extents.front().first_touch_ns;
    return ta != tb ? ta < tb : a.path < b.path;
  });
}

// Pieces of [start, end) not yet in `covered` (start -> end, disjoint and
// not touching), which then grows by [start, end). Each page so keeps the
// time of its first touch. Ranges that touch become one entry, so a file
// read from start to end in 4 KiB reads is one entry, not one per page.
void AddFirstTouch(std::map<uint64_t, uint64_t>& covered, uint64_t start, uint64_t end, uint64_t ts,
                   std::vector<PlanExtent>& pieces) {
  auto it = covered.upper_bound(start);
  if (it != covered.begin() && std::prev(it)->second >= start) --it;
  uint64_t cursor = start, new_start = start, new_end = end;
  while (it != covered.end() && it->first <= end) {
    if (it->first > cursor) pieces.push_back({cursor, it->first - cursor, ts});
    cursor = std::max(cursor, it->second);
    new_start = std::min(new_start, it->first);
    new_end = std::max(new_end, it->second);
    it = covered.erase(it);
  }
  if (cursor < end) pieces.push_back({cursor, end - cursor, ts});
  covered[new_start] = new_end;
}

uint64_t Median(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

Plan FromProto(const PrefetchPlan& pb) {
  Plan plan;
  plan.format_version = pb.format_version();
  plan.creation.syspgo_version = pb.creation().syspgo_version();
  plan.creation.host = pb.creation().host();
  plan.creation.source_run_ids.assign(pb.creation().source_run_ids().begin(), pb.creation().source_run_ids().end());
  plan.creation.merged_runs = pb.creation().merged_runs();
  for (const auto& f : pb.files()) {
    PlanFile& pf = plan.files.emplace_back();
    pf.path = f.path();
    pf.fingerprint = {f.size(), f.mtime_ns(), f.inode(), f.device(), f.sample_checksum(), f.ctime_ns()};
    for (const auto& e : f.extents()) pf.extents.push_back({e.offset(), e.length(), e.first_touch_ns()});
  }
  for (const auto& l : pb.lookups()) plan.lookups.push_back({l.path(), l.first_touch_ns()});
  return plan;
}

PrefetchPlan ToProto(const Plan& plan) {
  PrefetchPlan pb;
  pb.set_format_version(plan.format_version);
  auto* c = pb.mutable_creation();
  c->set_syspgo_version(plan.creation.syspgo_version);
  c->set_host(plan.creation.host);
  for (int64_t id : plan.creation.source_run_ids) c->add_source_run_ids(id);
  c->set_merged_runs(plan.creation.merged_runs);
  for (const auto& f : plan.files) {
    auto* pf = pb.add_files();
    pf->set_path(f.path);
    pf->set_size(f.fingerprint.size);
    pf->set_mtime_ns(f.fingerprint.mtime_ns);
    pf->set_inode(f.fingerprint.inode);
    pf->set_device(f.fingerprint.device);
    pf->set_sample_checksum(f.fingerprint.checksum);
    pf->set_ctime_ns(f.fingerprint.ctime_ns);
    for (const auto& e : f.extents) {
      auto* pe = pf->add_extents();
      pe->set_offset(e.offset);
      pe->set_length(e.length);
      pe->set_first_touch_ns(e.first_touch_ns);
    }
  }
  for (const auto& l : plan.lookups) {
    auto* pl = pb.add_lookups();
    pl->set_path(l.path);
    pl->set_first_touch_ns(l.first_touch_ns);
  }
  return pb;
}

bool LookupOrder(const PlanLookup& a, const PlanLookup& b) {
  return a.first_touch_ns != b.first_touch_ns ? a.first_touch_ns < b.first_touch_ns : a.path < b.path;
}

std::string RemakeAdvice(const std::string& name) {
  return "re-create it with 'syspgo optimize DB --emit plan -o " + name + "'";
}

}  // namespace

uint64_t ExtentBytesWithin(const PlanExtent& e, uint64_t size) {
  uint64_t limit = PageDown(size);
  if (limit != size) limit = limit > UINT64_MAX - kPlanPageSize ? UINT64_MAX : limit + kPlanPageSize;
  return e.offset >= limit ? 0 : std::min(e.length, limit - e.offset);
}

// Sums saturate: a plan from outside may claim sizes near 2^64 for many files.
uint64_t PlanFile::Bytes() const {
  uint64_t n = 0;
  for (const auto& e : extents) n += std::min(ExtentBytesWithin(e, fingerprint.size), UINT64_MAX - n);
  return n;
}

uint64_t Plan::Bytes() const {
  uint64_t n = 0;
  for (const auto& f : files) n += std::min(f.Bytes(), UINT64_MAX - n);
  return n;
}

size_t Plan::ExtentCount() const {
  size_t n = 0;
  for (const auto& f : files) n += f.extents.size();
  return n;
}

std::vector<PlanStep> ReplayOrder(const Plan& plan) {
  std::vector<PlanStep> steps;
  for (uint32_t f = 0; f < plan.files.size(); ++f)
    for (uint32_t e = 0; e < plan.files[f].extents.size(); ++e) steps.push_back({f, e});
  auto time = [&](const PlanStep& s) { return plan.files[s.file].extents[s.extent].first_touch_ns; };
  std::stable_sort(steps.begin(), steps.end(),
                   [&](const PlanStep& a, const PlanStep& b) { return time(a) < time(b); });
  return steps;
}

std::string ReplayListing(const Plan& plan, const std::vector<bool>& include) {
  Table t({{"order", "order", Table::Align::kRight, true},
           {"offset", "offset", Table::Align::kRight, true},
           {"length", "length", Table::Align::kRight, true},
           {"first touch", "first_touch_ns", Table::Align::kRight, true},
           {"file", "path", Table::Align::kLeft, false}});
  for (const PlanStep& s : ReplayOrder(plan)) {
    if (!include.empty() && !include[s.file]) continue;
    const PlanFile& f = plan.files[s.file];
    const PlanExtent& e = f.extents[s.extent];
    t.AddRow({std::to_string(t.size() + 1), std::to_string(e.offset),
              FormatBytes(ExtentBytesWithin(e, f.fingerprint.size)), FormatNs(e.first_touch_ns), f.path});
  }
  return t.Text();
}

// ---- Fingerprints -----------------------------------------------------------

Result<FileFingerprint> ComputeFingerprint(int fd, const std::string& path, const FileFingerprint* recorded) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return MakeError("cannot stat " + path + ": " + Errno(errno), errno);
  if (!S_ISREG(st.st_mode)) return MakeError(path + " is not a regular file; plans list regular files only");
  FileFingerprint fp;
  fp.size = static_cast<uint64_t>(st.st_size);
  fp.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  fp.inode = st.st_ino;
  fp.device = st.st_dev;
  fp.ctime_ns = int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  fp.checksum = recorded ? recorded->checksum : 0;
  if (recorded && recorded->ctime_ns && recorded->ctime_ns == fp.ctime_ns && SameContents(*recorded, fp)) return fp;

  uint64_t blocks = (fp.size + kPlanPageSize - 1) / kPlanPageSize;
  std::vector<uint64_t> picks;
  for (uint64_t i = 0; i < std::min(blocks, kSampleBlocks); ++i)
    picks.push_back(blocks <= kSampleBlocks ? i : i * (blocks - 1) / (kSampleBlocks - 1));

  std::unique_ptr<unsigned char, decltype(&free)> buf(
      static_cast<unsigned char*>(aligned_alloc(kPlanPageSize, kPlanPageSize * kSampleBlocks)), &free);
  if (!buf) return MakeError("out of memory while fingerprinting " + path, ENOMEM);
  // O_DIRECT keeps the sample reads out of the page cache; file systems
  // without it (tmpfs) are read through the cache, which is their storage.
  int flags = fcntl(fd, F_GETFL);
  bool direct = flags >= 0 && fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
  uint64_t h = kFnvBasis;
  Status st_read;
  // Consecutive sample blocks (all of them in a file of up to kSampleBlocks
  // pages) are read with one request: each read is a wait for the disk,
  // and a replay checks every file of the plan before reading it.
  for (size_t i = 0; i < picks.size();) {
    size_t run = 1;
    while (i + run < picks.size() && picks[i + run] == picks[i] + run) ++run;
    uint64_t off = picks[i] * kPlanPageSize, want = std::min(run * kPlanPageSize, fp.size - off);
    ssize_t n;
    do n = pread(fd, buf.get(), direct ? run * kPlanPageSize : want, off);
    while (n < 0 && errno == EINTR);
    if (n < 0 && direct && errno == EINVAL) {  // O_DIRECT accepted by fcntl but not by this read
      fcntl(fd, F_SETFL, flags);
      direct = false;
      do n = pread(fd, buf.get(), want, off);
      while (n < 0 && errno == EINTR);
    }
    if (n < 0) {
      st_read = MakeError("cannot read " + path + " at offset " + std::to_string(off) + ": " + Errno(errno), errno);
      break;
    }
    if (static_cast<uint64_t>(n) < want) {
      st_read = MakeError(path + " shrank while its fingerprint was being read; retry once nothing writes to it");
      break;
    }
    h = Fnv1a(h, buf.get(), want);  // the blocks in order, as one block at a time would hash them
    i += run;
  }
  if (direct) fcntl(fd, F_SETFL, flags);
  if (!st_read.ok()) return st_read.error();
  fp.checksum = h;
  return fp;
}

Result<FileFingerprint> ComputeFingerprint(const std::string& path) {
  auto fd = OpenRegularAsUser(path);  // the path comes from a profile: it may name a FIFO
  if (!fd) return fd.error();
  auto fp = ComputeFingerprint(*fd, path);
  close(*fd);
  return fp;
}

bool SameContents(const FileFingerprint& a, const FileFingerprint& b) {
  return a.size == b.size && a.mtime_ns == b.mtime_ns && a.inode == b.inode && a.checksum == b.checksum;
}

std::string DescribeMismatch(const FileFingerprint& planned, const FileFingerprint& now) {
  std::vector<std::string> why;
  if (planned.size != now.size)
    why.push_back("size " + std::to_string(planned.size) + " -> " + std::to_string(now.size) + " bytes");
  if (planned.inode != now.inode)
    why.push_back("replaced (inode " + std::to_string(planned.inode) + " -> " + std::to_string(now.inode) + ")");
  if (planned.mtime_ns != now.mtime_ns) why.push_back("modification time changed");
  if (planned.checksum != now.checksum) why.push_back("sampled contents changed");
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// ---- Building ---------------------------------------------------------------

void PlanBuilder::Add(const std::string& path, uint64_t dev, uint64_t ino, uint64_t offset, uint64_t length,
                      uint64_t ts_ns) {
  if (length == 0) return;
  auto [it, fresh] = file_of_.try_emplace({dev, ino}, static_cast<uint32_t>(files_.size()));
  if (fresh) {
    files_.push_back({path, dev, ino, ts_ns, offset});
  } else if (File& f = files_[it->second]; std::tie(ts_ns, offset) < std::tie(f.named_at, f.named_offset)) {
    f.path = path;
    f.named_at = ts_ns;
    f.named_offset = offset;
  }
  records_.push_back({it->second, offset, length, ts_ns});
}

void PlanBuilder::AddLookup(const std::string& path, uint64_t ts_ns) {
  if (path.empty() || path[0] != '/') return;  // relative to a directory the plan does not know
  for (const char* pseudo : {"/proc/", "/sys/", "/dev/"})
    if (path.rfind(pseudo, 0) == 0) return;
  auto [it, added] = lookups_.emplace(path, ts_ns);
  if (!added) it->second = std::min(it->second, ts_ns);
}

PlanBuilder::Output PlanBuilder::Build() const {
  Output out;
  out.plan.creation = creation_;
  if (out.plan.creation.syspgo_version.empty()) out.plan.creation.syspgo_version = SYSPGO_VERSION;

  std::vector<std::vector<const Record*>> by_file(files_.size());
  for (const auto& r : records_) by_file[r.file].push_back(&r);

  for (const auto& [key, index] : file_of_) {  // in (dev, ino) order; SortFiles orders the plan
    std::vector<const Record*>& recs = by_file[index];
    std::stable_sort(recs.begin(), recs.end(), [](const Record* a, const Record* b) {
      return a->ts_ns != b->ts_ns ? a->ts_ns < b->ts_ns : a->offset < b->offset;
    });
    const std::string& path = files_[index].path;  // the name it was first touched by
    auto fp = ComputeFingerprint(path);
    if (!fp.ok()) {
      out.warnings.push_back("left out " + path + ": " + fp.error().message);
      continue;
    }
    if (fp->device != key.first || fp->inode != key.second) {
      out.warnings.push_back("left out " + path + ": it is now inode " + std::to_string(fp->inode) +
                             " on device " + std::to_string(fp->device) + " but the profile saw inode " +
                             std::to_string(key.second) + " on device " + std::to_string(key.first) +
                             "; the file was replaced after the profile was recorded, so record a new profile");
      continue;
    }
    uint64_t limit = PageUp(fp->size);
    std::map<uint64_t, uint64_t> covered;
    std::vector<PlanExtent> pieces;
    for (const Record* r : recs) {
      uint64_t last = r->length > UINT64_MAX - r->offset ? UINT64_MAX : r->offset + r->length;
      uint64_t start = PageDown(r->offset), end = PageUp(std::min(last, limit));
      if (start < end) AddFirstTouch(covered, start, end, r->ts_ns, pieces);
    }
    if (pieces.empty()) {
      out.warnings.push_back("left out " + path + ": every touched range lies beyond its end now (" +
                             std::to_string(fp->size) + " bytes)");
      continue;
    }
    if (keep_pieces_) std::sort(pieces.begin(), pieces.end(), TouchOrder);
    out.plan.files.push_back({path, fp.value(), keep_pieces_ ? std::move(pieces) : Coalesce(std::move(pieces), merge_gap_)});
  }
  SortFiles(out.plan.files);
  for (const auto& [path, ts] : lookups_) out.plan.lookups.push_back({path, ts});
  std::sort(out.plan.lookups.begin(), out.plan.lookups.end(), LookupOrder);
  return out;
}

// ---- Merging ----------------------------------------------------------------

Result<Plan> MergePlans(const std::vector<Plan>& plans) {
  if (plans.empty()) return MakeError("no plans to merge; give at least one plan");
  Plan merged;
  merged.creation.syspgo_version = SYSPGO_VERSION;
  merged.creation.merged_runs = 0;
  std::set<std::string> hosts;
  std::set<int64_t> runs;
  // path -> the file entries that list it, in plan order.
  std::map<std::string, std::vector<const PlanFile*>> by_path;
  std::map<std::string, std::vector<uint64_t>> lookup_times;
  for (const auto& p : plans) {
    for (const auto& l : p.lookups) lookup_times[l.path].push_back(l.first_touch_ns);
    merged.creation.merged_runs += std::max<uint32_t>(1, p.creation.merged_runs);
    for (const auto& h : Split(p.creation.host, ','))
      if (!h.empty()) hosts.insert(h);
    runs.insert(p.creation.source_run_ids.begin(), p.creation.source_run_ids.end());
    for (const auto& f : p.files) by_path[f.path].push_back(&f);
  }
  for (const auto& h : hosts) merged.creation.host += (merged.creation.host.empty() ? "" : ",") + h;
  merged.creation.source_run_ids.assign(runs.begin(), runs.end());

  for (const auto& [path, entries] : by_path) {
    const FileFingerprint& fp = entries.back()->fingerprint;
    std::vector<std::vector<PlanExtent>> runs_extents;  // per agreeing plan, sorted by offset
    std::vector<uint64_t> cuts;
    for (const PlanFile* f : entries) {
      if (!SameContents(f->fingerprint, fp)) continue;
      auto& ex = runs_extents.emplace_back(f->extents);
      std::sort(ex.begin(), ex.end(), [](const PlanExtent& a, const PlanExtent& b) { return a.offset < b.offset; });
      for (const auto& e : ex) {
        cuts.push_back(e.offset);
        cuts.push_back(e.offset + e.length);
      }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    // Between consecutive cuts every plan either covers the whole piece with
    // one extent or none of it; the piece's time is the median of the covers.
    std::vector<size_t> cursor(runs_extents.size(), 0);
    std::vector<PlanExtent> pieces;
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      std::vector<uint64_t> times;
      for (size_t r = 0; r < runs_extents.size(); ++r) {
        const auto& ex = runs_extents[r];
        while (cursor[r] < ex.size() && ex[cursor[r]].offset + ex[cursor[r]].length <= cuts[c]) ++cursor[r];
        if (cursor[r] < ex.size() && ex[cursor[r]].offset <= cuts[c]) times.push_back(ex[cursor[r]].first_touch_ns);
      }
      if (!times.empty()) pieces.push_back({cuts[c], cuts[c + 1] - cuts[c], Median(times)});
    }
    merged.files.push_back({path, fp, Coalesce(std::move(pieces), 0)});
  }
  SortFiles(merged.files);
  for (auto& [path, times] : lookup_times) merged.lookups.push_back({path, Median(std::move(times))});
  std::sort(merged.lookups.begin(), merged.lookups.end(), LookupOrder);
  return merged;
}

// ---- Storing ----------------------------------------------------------------

Status CheckPlan(const Plan& plan, const std::string& name) {
  auto bad = [&](const std::string& what) {
    return MakeError(name + " is not a consistent prefetch plan: " + what + "; " + RemakeAdvice(name));
  };
  if (plan.format_version == 0 || plan.format_version > kPlanFormatVersion)
    return MakeError(name + " is a prefetch plan of format version " + std::to_string(plan.format_version) +
                     ", which this syspgo (" SYSPGO_VERSION ") does not read; use the syspgo that wrote it or " +
                     RemakeAdvice(name));
  std::set<std::string> paths;
  for (size_t i = 0; i < plan.files.size(); ++i) {
    const PlanFile& f = plan.files[i];
    std::string where = "file #" + std::to_string(i) + " (" + f.path + ")";
    if (f.path.empty() || f.path[0] != '/') return bad(where + " has no absolute path");
    if (!paths.insert(f.path).second) return bad(where + " is listed twice");
    if (f.extents.empty()) return bad(where + " has no extents");
    if (i > 0) {
      const PlanFile& p = plan.files[i - 1];
      uint64_t tp = p.extents.front().first_touch_ns, tf = f.extents.front().first_touch_ns;
      if (tp > tf || (tp == tf && p.path > f.path)) return bad(where + " is out of first-touch order");
    }
    for (size_t e = 0; e < f.extents.size(); ++e) {
      const PlanExtent& x = f.extents[e];
      std::string ex = where + " extent #" + std::to_string(e);
      if (x.offset % kPlanPageSize || x.length % kPlanPageSize || x.length == 0)
        return bad(ex + " is not whole 4096-byte pages");
      if (x.offset + x.length < x.offset) return bad(ex + " runs past 2^64");
      if (e > 0 && TouchOrder(x, f.extents[e - 1])) return bad(ex + " is out of first-touch order");
    }
    std::vector<PlanExtent> by_offset = f.extents;
    std::sort(by_offset.begin(), by_offset.end(),
              [](const PlanExtent& a, const PlanExtent& b) { return a.offset < b.offset; });
    for (size_t e = 1; e < by_offset.size(); ++e)
      if (by_offset[e - 1].offset + by_offset[e - 1].length > by_offset[e].offset)
        return bad(where + " has overlapping extents at offset " + std::to_string(by_offset[e].offset));
  }
  std::set<std::string> looked_up;
  for (size_t i = 0; i < plan.lookups.size(); ++i) {
    const PlanLookup& l = plan.lookups[i];
    std::string where = "lookup #" + std::to_string(i) + " (" + l.path + ")";
    if (l.path.empty() || l.path[0] != '/') return bad(where + " is not an absolute path");
    if (l.path.find('\0') != std::string::npos) return bad(where + " holds a NUL byte");
    if (!looked_up.insert(l.path).second) return bad(where + " is listed twice");
    if (i > 0 && LookupOrder(l, plan.lookups[i - 1])) return bad(where + " is out of first-lookup order");
  }
  return {};
}

std::string SerializePlan(const Plan& plan) {
  std::string payload;
  ToProto(plan).SerializeToString(&payload);
  std::string out(kMagic, sizeof kMagic);
  PutLe(out, kContainerVersion, 4);
  PutLe(out, 0, 4);
  PutLe(out, payload.size(), 8);
  PutLe(out, Fnv1a(kFnvBasis, reinterpret_cast<const unsigned char*>(payload.data()), payload.size()), 8);
  return out + payload;
}

Result<Plan> ParsePlan(const std::string& bytes, const std::string& name) {
  if (bytes.empty()) return MakeError(name + " is empty, not a prefetch plan; " + RemakeAdvice(name));
  size_t head = std::min(bytes.size(), sizeof kMagic);
  if (bytes.compare(0, head, kMagic, head) != 0)
    return MakeError(name + " is not a syspgo prefetch plan (it does not start with \"SYSPGOPF\"); give a file "
                     "written by 'syspgo optimize DB --emit plan'");
  if (bytes.size() < kHeaderSize)
    return MakeError(name + " is truncated: it ends inside the " + std::to_string(kHeaderSize) + "-byte header (" +
                     std::to_string(bytes.size()) + " bytes); " + RemakeAdvice(name));
  uint64_t version = GetLe(bytes, 8, 4), length = GetLe(bytes, 16, 8), sum = GetLe(bytes, 24, 8);
  if (version != kContainerVersion)
    return MakeError(name + " is a prefetch plan of container version " + std::to_string(version) +
                     ", which this syspgo (" SYSPGO_VERSION ") does not read; use the syspgo that wrote it or " +
                     RemakeAdvice(name));
  if (length > kMaxPlanBytes)
    return MakeError(name + " is corrupted: its header announces " + std::to_string(length) +
                     " bytes of plan data, more than any plan holds; " + RemakeAdvice(name));
  uint64_t have = bytes.size() - kHeaderSize;
  if (have < length)
    return MakeError(name + " is truncated: its header announces " + std::to_string(length) +
                     " bytes of plan data but only " + std::to_string(have) + " follow; copy it again or " +
                     RemakeAdvice(name));
  if (have > length)
    return MakeError(name + " is corrupted: unexpected bytes follow the " + std::to_string(length) +
                     " bytes of plan data its header announces; " + RemakeAdvice(name));
  auto payload = reinterpret_cast<const unsigned char*>(bytes.data() + kHeaderSize);
  if (Fnv1a(kFnvBasis, payload, length) != sum)
    return MakeError(name + " is corrupted: the checksum of its plan data does not match its header; " +
                     RemakeAdvice(name));
  PrefetchPlan pb;
  if (!pb.ParseFromArray(payload, static_cast<int>(length)))
    return MakeError(name + " is corrupted: its plan data does not parse as syspgo.PrefetchPlan; " +
                     RemakeAdvice(name));
  Plan plan = FromProto(pb);
  SYSPGO_TRY(CheckPlan(plan, name));
  return plan;
}

Status WritePlan(const Plan& plan, const std::string& path) {
  SYSPGO_TRY(CheckPlan(plan, "the plan for " + path));
  return WriteFileAtomically(path, SerializePlan(plan));
}

namespace {

// Appends up to `limit` bytes of `fd` to `out`, stopping early at end of file.
Status ReadUpTo(int fd, size_t limit, const std::string& path, std::string& out) {
  char buf[1 << 16];
  while (limit > 0) {
    ssize_t n = read(fd, buf, std::min(sizeof buf, limit));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError("cannot read plan " + path + ": " + Errno(errno), errno);
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    limit -= static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

Result<Plan> ReadPlan(const std::string& path) {
  auto opened = OpenRegularAsUser(path, "plan");  // outside input: the user's rights, and no FIFO may block
  if (!opened) return opened.error();
  int fd = *opened;
  // The header first: a file that is not a plan is refused after 32 bytes,
  // however large it is; a plan is read up to one byte past its length.
  std::string bytes;
  Status st = ReadUpTo(fd, kHeaderSize, path, bytes);
  if (st.ok() && bytes.size() == kHeaderSize && bytes.compare(0, sizeof kMagic, kMagic, sizeof kMagic) == 0)
    st = ReadUpTo(fd, std::min<uint64_t>(GetLe(bytes, 16, 8), kMaxPlanBytes) + 1, path, bytes);
  close(fd);
  if (!st.ok()) return st.error();
  return ParsePlan(bytes, path);
}

std::string PlanJson(const Plan& plan) {
  using Json = nlohmann::ordered_json;
  const auto& c = plan.creation;
  Json files = Json::array();
  for (const PlanFile& f : plan.files) {
    char sum[24];
    snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(f.fingerprint.checksum));
    Json extents = Json::array();
    for (const PlanExtent& x : f.extents)
      extents.push_back({{"offset", x.offset}, {"length", x.length}, {"first_touch_ns", x.first_touch_ns}});
    files.push_back({{"path", f.path},
                     {"size", f.fingerprint.size},
                     {"mtime_ns", f.fingerprint.mtime_ns},
                     {"inode", f.fingerprint.inode},
                     {"device", f.fingerprint.device},
                     {"ctime_ns", f.fingerprint.ctime_ns},
                     {"sample_checksum", sum},
                     {"bytes", f.Bytes()},
                     {"extents", std::move(extents)}});
  }
  Json lookups = Json::array();
  for (const PlanLookup& l : plan.lookups) lookups.push_back({{"path", l.path}, {"first_touch_ns", l.first_touch_ns}});
  Json j = {{"format_version", plan.format_version},
            {"syspgo_version", c.syspgo_version},
            {"host", c.host},
            {"merged_runs", c.merged_runs},
            {"source_run_ids", c.source_run_ids},
            {"bytes", plan.Bytes()},
            {"files", std::move(files)},
            {"lookups", std::move(lookups)}};
  // A plan is someone else's file: a path that is not UTF-8 is shown with
  // U+FFFD rather than stopping the listing.
  return JsonDocument(j);
}

}  // namespace syspgo
