//===- fileio_group.cc - loader for bpf/fileio.bpf.c: file-I/O syscalls --===//
// Decodes the fileio events into file_io, file_open, file_lookup and mmap
// rows, and records each (dev, ino) -> path the first time an open names it,
// with the file's size then.
// With --detail lean (the default) the kernel counts every read, write, sync
// and close per (file, syscall) and sends only the calls analyses need one
// by one (bpf/fileio.bpf.c); the loader drains the counts into file_io_total
// and file_io_hist about once a second, rewriting only the rows that
// changed, so a long run's database grows with the files it meets.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collect/bpf_maps.h"
#include "collect/container.h"
#include "common/identity.h"
#include "bpf/fileio.h"
#include "syspgo_bpf.skel.h"
#include "common/util.h"

namespace syspgo {
namespace {

struct DevInoHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& k) const { return k.first * 0x9E3779B97F4A7C15ull ^ k.second; }
};

// The path components come leaf first, each NUL-terminated.
std::string JoinPath(const fileio_open_event* e) {
  size_t n = std::min<size_t>(e->path_len, sizeof e->path);
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < n) {
    size_t len = strnlen(e->path + i, n - i);
    if (len) parts.emplace_back(e->path + i, len);
    i += len + 1;
  }
  std::string out = e->truncated ? "..." : "";
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    out += '/';
    out += *it;
  }
  return out.empty() ? "/" : out;
}

// One (file, syscall) total over the CPUs (the kernel counts per CPU).
fileio_total_val Sum(const fileio_total_val* per_cpu, size_t cpus) {
  fileio_total_val t{};
  for (size_t c = 0; c < cpus; ++c) {
    const fileio_total_val& v = per_cpu[c];
    if (!v.calls) continue;
    t.first_ts = t.calls ? std::min(t.first_ts, v.first_ts) : v.first_ts;
    t.calls += v.calls;
    t.errors += v.errors;
    t.bytes += v.bytes;
    t.req += v.req;
    t.sum_ns += v.sum_ns;
    t.max_ns = std::max(t.max_ns, v.max_ns);
    for (uint32_t s = 0; s < FILEIO_HIST_SLOTS; ++s) t.slots[s] += v.slots[s];
  }
  return t;
}

class FileioGroup : public ProbeGroup {
 public:
  FileioGroup() : ProbeGroup(SYSPGO_GROUP_FILEIO) {}

  void DeclareTables(Writer& w) override {
    io_ = w.Table("file_io", {"ts", "dur", "pid", "tid", "nr", "fd", "dev", "ino", "kind", "pos", "req", "ret"});
    open_ = w.Table("file_open", {"ts", "dur", "pid", "tid", "nr", "path", "flags", "ret", "dev", "ino"});
    lookup_ = w.Table("file_lookup", {"ts", "dur", "pid", "tid", "nr", "path", "flags", "ret"});
    oncpu_ = w.Table("syscall_oncpu", {"ts", "dur", "oncpu", "pid", "tid", "nr", "arg0", "arg1", "arg2", "ret"});
    mmap_ = w.Table("mmap", {"ts", "dur", "pid", "tid", "addr", "len", "prot", "flags", "fd", "dev", "ino", "off"});
    file_ = w.Table("file", {"dev", "ino", "path"}, "INSERT OR IGNORE");
    file_size_ = w.Table("file_size", {"dev", "ino", "size"}, "INSERT OR IGNORE");
    total_ = w.Table("file_io_total", {"dev", "ino", "kind", "nr", "calls", "errors", "bytes", "req", "total_ns",
                                       "max_ns", "first_ts"}, "INSERT OR REPLACE");
    hist_ = w.Table("file_io_hist", {"dev", "ino", "kind", "nr", "slot", "calls"}, "INSERT OR REPLACE");
    ledger_ = w.Table("run_aggregate", {"probe_group", "map", "entries", "overflow"}, "INSERT OR REPLACE");
  }

  // The totals that changed since the last drain, written again (each row
  // replaces its older self); a histogram slot only when its count moved.
  void Drain(Writer& w) override {
    if (!lean_) return;
    totals_ = 0;
    std::unordered_map<std::string, std::vector<std::pair<size_t, fileio_total_val>>> cached = CachedTotals();
    std::vector<fileio_total_val> values(PossibleCpus());
    drain_status_ = ForEachEntryValues<fileio_total_key, fileio_total_val>(
        bpf_map__fd(skel_->maps.fileio_totals), name(), "fileio_totals", PossibleCpus(),
        [&](const fileio_total_key& k, const fileio_total_val* per_cpu) {
          ++totals_;
          std::string key(reinterpret_cast<const char*>(&k), sizeof k);
          if (auto c = cached.find(key); c != cached.end()) {  // those CPUs' values are in their slots
            std::copy(per_cpu, per_cpu + values.size(), values.begin());
            for (const auto& [cpu, v] : c->second) values[cpu] = v;
            per_cpu = values.data();
          }
          fileio_total_val v = Sum(per_cpu, PossibleCpus());
          auto [last, fresh] = written_.try_emplace(key);
          if (!fresh && last->second.calls == v.calls) return;  // every change counts a call
          int64_t dev = k.kind ? KernelDevToUser(k.dev) : 0;
          w.Row(total_)
              .I(dev).I(k.ino).I(k.kind).I(k.nr).I(v.calls).I(v.errors).I(v.bytes).I(v.req).I(v.sum_ns)
              .I(v.max_ns).I(static_cast<int64_t>(v.first_ts - start_ns_));
          for (uint32_t s = 0; s < FILEIO_HIST_SLOTS; ++s)
            if (v.slots[s] != last->second.slots[s])
              w.Row(hist_).I(dev).I(k.ino).I(k.kind).I(k.nr).I(s).I(v.slots[s]);
          last->second = v;
        });
    // The ledger from the first drain on: it also tells analyses this run's
    // file I/O is counted here (RecordingTier), should the run be cut short.
    overflow_ = PerCpuCounters(bpf_map__fd(skel_->maps.fileio_overflow), FILEIO_OVERFLOW_MAX);
    w.Row(ledger_).T(name()).T("fileio_totals").I(totals_).I(overflow_[FILEIO_OVERFLOW_TOTALS]);
    // A touch the map refused sent its call as a row: nothing is missing.
    // Its entries, and the truncation map's, are counted at the end (Finish).
    w.Row(ledger_).T(name()).T("fileio_touched").I(0).I(overflow_[FILEIO_OVERFLOW_TOUCHED]);
    // A truncation it could not count: that file's rewritten pages may miss rows.
    w.Row(ledger_).T(name()).T("fileio_truncations").I(0).I(overflow_[FILEIO_OVERFLOW_TRUNCATIONS]);
  }

  // The keys held in fileio_total_cache (bpf/fileio.bpf.c), each with the
  // value of every CPU whose slot holds it. Read while the programs run, a
  // value may be one a CPU has just written back and replaced: the counts
  // lag until the next drain, and the last (after detaching) is exact.
  std::unordered_map<std::string, std::vector<std::pair<size_t, fileio_total_val>>> CachedTotals() {
    std::unordered_map<std::string, std::vector<std::pair<size_t, fileio_total_val>>> out;
    std::vector<fileio_total_slot> per_cpu(PossibleCpus());
    for (uint32_t i = 0; i < FILEIO_CACHE_SLOTS; ++i) {
      if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.fileio_total_cache), &i, per_cpu.data()) != 0) continue;
      for (size_t cpu = 0; cpu < per_cpu.size(); ++cpu)
        if (per_cpu[cpu].val.calls)
          out[std::string(reinterpret_cast<const char*>(&per_cpu[cpu].key), sizeof per_cpu[cpu].key)].emplace_back(
              cpu, per_cpu[cpu].val);
    }
    return out;
  }

  // Drain() ran last, after the last event; the touch map's size is
  // counted once, here (reading it each second would cost more than it says).
  void Finish(Writer& w) override {
    if (!lean_) return;
    auto chunks = CountEntries<fileio_touch_key, uint64_t>(bpf_map__fd(skel_->maps.fileio_touched), name(),
                                                           "fileio_touched");
    if (chunks) w.Row(ledger_).T(name()).T("fileio_touched").I(*chunks).I(overflow_[FILEIO_OVERFLOW_TOUCHED]);
    auto files = CountEntries<fileio_file_ref, uint32_t>(bpf_map__fd(skel_->maps.fileio_truncations), name(),
                                                         "fileio_truncations");
    if (files) w.Row(ledger_).T(name()).T("fileio_truncations").I(*files).I(overflow_[FILEIO_OVERFLOW_TRUNCATIONS]);
    if (!drain_status_.ok()) note += (note.empty() ? "" : " ") + drain_status_.error().message;
    if (overflow_[FILEIO_OVERFLOW_TOTALS])
      note += (note.empty() ? "" : " ") + std::string("the lean file-I/O totals map was full ") +
              std::to_string(overflow_[FILEIO_OVERFLOW_TOTALS]) +
              " times: file_io_total undercounts by those calls (run_aggregate); record with --detail full.";
  }

  // Files an attached process opened before we came: paths from /proc.
  void OnTarget(Writer& w, uint32_t pid, bool attached) override {
    if (!attached) return;
    roots_.Add(static_cast<pid_t>(pid));
    std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = opendir(dir.c_str());
    if (!d) return;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string fd = dir + "/" + e->d_name;
      std::string target = ReadLinkOrEmpty(fd);
      struct stat sb {};
      if (target.empty() || target[0] != '/' || stat(fd.c_str(), &sb) != 0) continue;
      if (seen_.insert({sb.st_dev, sb.st_ino}).second) {
        w.Row(file_).I(sb.st_dev).I(sb.st_ino).T(target);
        if (S_ISREG(sb.st_mode)) w.Row(file_size_).I(sb.st_dev).I(sb.st_ino).I(sb.st_size);
      }
    }
    closedir(d);
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    int64_t ts = static_cast<int64_t>(h->ts - start_ns_);
    switch (h->type) {
      case FILEIO_IO: {
        if (size < sizeof(fileio_io_event)) return;
        auto* e = static_cast<const fileio_io_event*>(data);
        w.Row(io_)
            .I(ts).I(e->dur).I(h->pid).I(h->tid).I(e->nr).I(e->fd)
            .I(e->file.kind ? KernelDevToUser(e->file.dev) : 0).I(e->file.ino).I(e->file.kind)
            .I(e->pos).I(e->req).I(e->ret);
        return;
      }
      case FILEIO_OPEN: {
        if (size < offsetof(fileio_open_event, path)) return;
        auto* e = static_cast<const fileio_open_event*>(data);
        uint64_t dev = e->ret >= 0 ? KernelDevToUser(e->file.dev) : 0;
        uint64_t ino = e->ret >= 0 ? e->file.ino : 0;
        w.Row(open_)
            .I(ts).I(e->dur).I(h->pid).I(h->tid).I(e->nr)
            .T(std::string(e->given, strnlen(e->given, sizeof e->given)))
            .I(e->flags).I(e->ret).I(dev).I(ino);
        if (e->ret >= 0 && seen_.insert({dev, ino}).second) {
          // The name is the traced process's: looked up (below a container's
          // root too) with the invoking user's rights, or not at all.
          ActAsUser as_user;
          std::string path = as_user.ok() ? HostPath(h->pid, JoinPath(e), dev, ino) : JoinPath(e);
          if (auto bytes = as_user.ok() ? RegularFileSize(path, dev, ino) : std::nullopt)
            w.Row(file_size_).I(dev).I(ino).I(*bytes);
          w.Row(file_).I(dev).I(ino).T(path);
        }
        return;
      }
      case FILEIO_LOOKUP: {
        if (size < sizeof(fileio_lookup_event)) return;
        auto* e = static_cast<const fileio_lookup_event*>(data);
        w.Row(lookup_)
            .I(ts).I(e->dur).I(h->pid).I(h->tid).I(e->nr)
            .T(std::string(e->given, strnlen(e->given, sizeof e->given)))
            .I(e->flags).I(e->ret);
        return;
      }
      case FILEIO_SYSCALL: {
        if (size < sizeof(fileio_syscall_event)) return;
        auto* e = static_cast<const fileio_syscall_event*>(data);
        w.Row(oncpu_)
            .I(ts).I(e->dur).I(e->oncpu).I(h->pid).I(h->tid).I(e->nr).I(static_cast<int64_t>(e->args[0]))
            .I(static_cast<int64_t>(e->args[1])).I(static_cast<int64_t>(e->args[2])).I(e->ret);
        return;
      }
      case FILEIO_MMAP: {
        if (size < sizeof(fileio_mmap_event)) return;
        auto* e = static_cast<const fileio_mmap_event*>(data);
        w.Row(mmap_)
            .I(ts).I(e->dur).I(h->pid).I(h->tid).I(static_cast<int64_t>(e->addr)).I(e->len).I(e->prot)
            .I(e->flags).I(e->fd).I(e->file.kind ? KernelDevToUser(e->file.dev) : 0).I(e->file.ino).I(e->off);
        return;
      }
    }
  }

 protected:
  Status Configure(syspgo_bpf* skel, const GroupContext& ctx) override {
    instance_min_ns_ = ctx.opts->offcpu_min_ns;
    skel->rodata->instance_min_ns = instance_min_ns_;
    skel->rodata->burst_gap_ns = 10 * instance_min_ns_;
    if (!lean_) {  // the maps stay empty: make them the smallest the kernel takes
      for (bpf_map* m : {skel->maps.fileio_totals, skel->maps.fileio_touched, skel->maps.fileio_truncations})
        if (int err = bpf_map__set_max_entries(m, 1)) return LibbpfError(name(), "size the lean tier's maps", err);
    }
    return {};
  }

 private:
  // The path on this host of a file that `pid` opened (a container's
  // process names it as it sees it), or as seen if not found here.
  std::string HostPath(uint32_t pid, const std::string& path, uint64_t dev, uint64_t ino) {
    roots_.Add(static_cast<pid_t>(pid));
    std::string here = roots_.Find(path, dev, ino);
    return here.empty() ? path : here;
  }

  uint64_t instance_min_ns_ = 0;
  int io_ = -1, open_ = -1, lookup_ = -1, oncpu_ = -1, mmap_ = -1, file_ = -1, file_size_ = -1, total_ = -1;
  int hist_ = -1, ledger_ = -1;
  uint64_t totals_ = 0;
  std::vector<uint64_t> overflow_ = std::vector<uint64_t>(FILEIO_OVERFLOW_MAX);  // refused updates, by map
  Status drain_status_;
  std::unordered_map<std::string, fileio_total_val> written_;  // key bytes -> the counts last written
  std::unordered_set<std::pair<uint64_t, uint64_t>, DevInoHash> seen_;
  ForeignRoots roots_;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakeFileioGroup() { return std::make_unique<FileioGroup>(); }

}  // namespace syspgo
