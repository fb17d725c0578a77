//===- pagecache_group.cc - loader for bpf/pagecache.bpf.c ---------------===//
// Page-cache additions and deletions (with the kernel stack of each
// deletion) and readahead decisions. Memory cgroups are v1 here: the loader
// finds the memory hierarchy (/proc/cgroups, /proc/mounts) for the kernel
// side, turns every cgroup id the kernel reports into a memory_cgroup row
// with its path and limit as they are while the run goes on, and admits the
// traced tree's cgroups that have a limit into the kernel's filter (the
// page cache of a cgroup without one is no story of this program). When
// attaching, the process's mapped files join the filter too.
// With --detail lean (the default) the kernel counts instead of sending each
// addition and deletion (bpf/pagecache.bpf.c): the ring buffer carries only
// new deletion stacks, memory cgroups and DAMON's reloads, and the loader
// drains the maps into the page_cache_total/_series tables about once a
// second (changed rows, replaced) and the 64-page chunks at the end.
#include <bpf/bpf.h>
#include <ftw.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bpf/pagecache.h"
#include "collect/btf_hooks.h"
#include "collect/bpf_maps.h"
#include "common/util.h"
#include "syspgo_bpf.skel.h"

namespace syspgo {
namespace {

// The v1 memory hierarchy id from /proc/cgroups ("memory <hierarchy> ..."), 0 if none.
uint32_t MemoryHierarchyId() {
  std::ifstream f("/proc/cgroups");
  std::string name;
  uint32_t hierarchy = 0;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    if (is >> name >> hierarchy && name == "memory") return hierarchy;
  }
  return 0;
}

// Where the v1 memory controller is mounted ("" if it is not).
std::string MemoryMount() {
  std::ifstream f("/proc/mounts");
  std::string dev, dir, type, opts, line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    if (!(is >> dev >> dir >> type >> opts) || type != "cgroup") continue;
    for (auto& o : Split(opts, ','))
      if (o == "memory") return dir;
  }
  return "";
}

// The memory cgroup of a process, relative to the hierarchy's root ("" if unknown).
std::string ProcessMemoryCgroup(uint32_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    // "4:memory:/a/b": controllers may be listed together ("4:memory,foo:/a").
    size_t c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    for (auto& ctl : Split(line.substr(c1 + 1, c2 - c1 - 1), ','))
      if (ctl == "memory") return line.substr(c2 + 1);
  }
  return "";
}

// cgroup v1 reports "no limit" as the largest page-aligned long; anything
// near it is no limit either.
constexpr int64_t kUnlimited = int64_t{1} << 62;

uint64_t InodeOf(const std::string& path) {
  struct stat sb {};
  return stat(path.c_str(), &sb) == 0 ? sb.st_ino : 0;
}

// nftw has no user pointer; the walk runs on the drain thread only.
std::unordered_map<uint64_t, std::string>* g_walk_out;
size_t g_walk_root_len;

int WalkOne(const char* path, const struct stat* sb, int type, FTW*) {
  if (type == FTW_D) {
    std::string rel(path + std::min(strlen(path), g_walk_root_len));
    (*g_walk_out)[sb->st_ino] = rel.empty() ? "/" : rel;
  }
  return 0;
}

class PagecacheGroup : public ProbeGroup {
 public:
  PagecacheGroup() : ProbeGroup(SYSPGO_GROUP_PAGECACHE) {}

  void DeclareTables(Writer& w) override {
    page_ = w.Table("page_cache", {"ts", "op", "pid", "tid", "comm", "dev", "ino", "idx", "pages", "task_cgroup",
                                   "page_cgroup", "why", "stack_id"});
    ra_ = w.Table("readahead", {"ts", "pid", "tid", "kind", "dev", "ino", "idx", "pages", "async_pages"});
    cgroup_ = w.Table("memory_cgroup", {"id", "path", "limit_bytes"}, "INSERT OR IGNORE");
    total_ = w.Table("page_cache_total", {"dev", "ino", "cgroup", "op", "deleter", "comm", "comm_id", "stack_id",
                                          "pages", "events", "first_ts"}, "INSERT OR REPLACE");
    page_row_ = w.Table("page_cache_page", {"dev", "ino", "idx", "ts", "pid", "tid", "why"});
    refault_row_ = w.Table("page_cache_page_refault", {"dev", "ino", "idx", "deleter", "stack_id"});
    series_ = w.Table("page_cache_series", {"ts", "op", "pages"}, "INSERT OR REPLACE");
    reuse_ = w.Table("page_cache_reuse", {"ts", "dev", "ino", "idx", "reuse_ns"});
    // run_aggregate.map names each map as it was called before the groups'
    // objects were linked (pc_*, not pagecache_*): analyses and databases
    // already recorded use those names.
    ledger_ = w.Table("run_aggregate", {"probe_group", "map", "entries", "overflow"}, "INSERT OR REPLACE");
  }

  // The process's memory cgroup joins the filter before it runs; an
  // attached process's mapped files too, so reclaim of pages it mapped
  // before we came is seen.
  void OnTarget(Writer& w, uint32_t pid, bool attached) override {
    if (!mount_.empty()) {
      std::string rel = ProcessMemoryCgroup(pid);
      uint64_t id = rel.empty() ? 0 : InodeOf(mount_ + rel);
      if (id && id != root_id_) {
        uint8_t one = 1;
        bpf_map_update_elem(bpf_map__fd(skel_->maps.pagecache_memcgs_seen), &id, &one, BPF_ANY);
        Admit(w, id);
      }
    }
    if (attached) SeedMappedFiles(pid);
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    int64_t ts = static_cast<int64_t>(h->ts - start_ns_);
    if (h->type == PAGECACHE_STACK) {
      if (size < offsetof(pagecache_stack_event, stack)) return;
      auto* e = static_cast<const pagecache_stack_event*>(data);
      size_t frames = std::min<size_t>(e->stack_len, size - offsetof(pagecache_stack_event, stack)) / sizeof(uint64_t);
      stack_of_.try_emplace(e->deleter, w.StackId(reinterpret_cast<const uint64_t*>(e->stack),
                                                 std::min<size_t>(frames, PAGECACHE_STACK_MAX)));
      return;
    }
    if (h->type == PAGECACHE_REUSE) {
      if (size < sizeof(pagecache_reuse_event)) return;
      auto* e = static_cast<const pagecache_reuse_event*>(data);
      w.Row(reuse_).I(ts).I(KernelDevToUser(e->dev)).I(e->ino).I(e->index).I(e->reuse_ns);
      return;
    }
    if (h->type == PAGECACHE_CGROUP) {
      if (size >= sizeof(pagecache_cgroup_event)) Admit(w, static_cast<const pagecache_cgroup_event*>(data)->id);
      return;
    }
    if (h->type == PAGECACHE_READAHEAD) {
      if (size < sizeof(pagecache_ra_event)) return;
      auto* e = static_cast<const pagecache_ra_event*>(data);
      w.Row(ra_).I(ts).I(h->pid).I(h->tid).I(e->kind).I(KernelDevToUser(e->dev)).I(e->ino)
          .I(e->index).I(e->pages).I(e->async_pages);
      return;
    }
    if (size < offsetof(pagecache_event, stack)) return;
    auto* e = static_cast<const pagecache_event*>(data);
    size_t frames = std::min<size_t>(e->stack_len, size - offsetof(pagecache_event, stack)) / sizeof(uint64_t);
    NoteCgroup(w, e->task_cgroup);
    NoteCgroup(w, e->page_cgroup);
    w.Row(page_)
        .I(ts).I(h->type).I(h->pid).I(h->tid).T(std::string(e->comm, strnlen(e->comm, sizeof e->comm)))
        .I(KernelDevToUser(e->dev)).I(e->ino).I(e->index).I(e->pages)
        .I(e->task_cgroup).I(e->page_cgroup).I(e->why)
        .I(w.StackId(reinterpret_cast<const uint64_t*>(e->stack), std::min<size_t>(frames, PAGECACHE_STACK_MAX)));
  }

 protected:
  Status Configure(syspgo_bpf* skel, const GroupContext&) override {
    std::vector<std::string> missing = DisableMissingTracepoints();
    for (const char* must : {"mm_filemap_add_to_page_cache", "mm_filemap_delete_from_page_cache"})
      if (std::find(missing.begin(), missing.end(), must) != missing.end())
        return MakeError(std::string("probe group 'pagecache': this kernel has no filemap:") + must +
                         " tracepoint (Linux 5.16+ with folios).");
    if (!missing.empty()) note = "missing tracepoints " + JoinNames(missing) + "; ";
    // The ends of reclaim batches (bpf/pagecache.bpf.c): the lean tier
    // reuses a batch's kernel stack only if it sees every one of them.
    const std::vector<bpf_program*> batch_ends = {
        skel->progs.pagecache_mm_vmscan_lru_isolate,        skel->progs.pagecache_mm_shrink_slab_start,
        skel->progs.pagecache_mm_shrink_slab_end,           skel->progs.pagecache_mm_vmscan_reclaim_pages,
        skel->progs.pagecache_mm_vmscan_direct_reclaim_end, skel->progs.pagecache_mm_vmscan_memcg_reclaim_end};
    bool all_ends = true;
    for (bpf_program* p : batch_ends) {
      all_ends = all_ends && bpf_program__autoload(p);
      if (!lean_) bpf_program__set_autoload(p, false);  // --detail full takes a stack per deletion
    }
    skel->rodata->reclaim_batches = lean_ && all_ends;

    uint32_t hierarchy = MemoryHierarchyId();
    mount_ = hierarchy ? MemoryMount() : "";
    bool kfunc = KernelHasFunction("bpf_task_get_cgroup1");
    if (!hierarchy || mount_.empty() || !kfunc) {
      note += !kfunc ? "no bpf_task_get_cgroup1 kfunc (Linux 6.8+)" : "no cgroup v1 memory hierarchy mounted";
      note += ": memory cgroups are not recorded";
      mount_.clear();
      hierarchy = 0;
    } else {
      root_id_ = InodeOf(mount_);
    }
    skel->rodata->memcg_hierarchy = hierarchy;
    skel->rodata->memcg_root_id = root_id_;
    skel->rodata->self_tgid = getpid();
    std::optional<uint32_t> user = OnlyForUser();
    skel->rodata->pagecache_only_own = user.has_value();
    skel->rodata->pagecache_own_uid = user.value_or(0);
    skel->rodata->run_start_ns = start_ns_;
    if (!lean_) {  // the maps stay empty: make them the smallest the kernel takes
      for (bpf_map* m : {skel->maps.pagecache_chunks, skel->maps.pagecache_chunks_spare, skel->maps.pagecache_totals, skel->maps.pagecache_series,
                         skel->maps.pagecache_stacks_seen})
        if (int err = bpf_map__set_max_entries(m, 1)) return LibbpfError(name(), "size the lean tier's maps", err);
    }
    return {};
  }

  // The running totals: a row is written again only when its counts
  // changed since the last drain (it replaces the old one), so the database
  // grows with the files, cgroups and deleters the run meets, not with its
  // length. A series slice two slices old is final: written once more and
  // removed from the map, which then holds only the last few slices.
  void Drain(Writer& w) override {
    if (!lean_) return;
    totals_ = 0;
    drain_status_ = ForEachEntry<pc_total_key, pc_total_val>(
        bpf_map__fd(skel_->maps.pagecache_totals), name(), "pc_totals", [&](const pc_total_key& k, const pc_total_val& v) {
          ++totals_;
          std::array<int64_t, 3> now = {static_cast<int64_t>(v.pages), static_cast<int64_t>(v.events),
                                        StackOf(k.deleter)};
          auto [last, fresh] = written_.try_emplace(std::string(reinterpret_cast<const char*>(&k), sizeof k), now);
          if (!fresh && last->second == now) return;
          last->second = now;
          std::string comm(k.comm, strnlen(k.comm, sizeof k.comm));
          w.Row(total_)
              .I(KernelDevToUser(k.dev)).I(k.ino).I(k.cgroup).I(k.op).I(DeleterOut(w, k.deleter))
              .T(comm).I(CommId(comm)).I(StackOf(k.deleter)).I(v.pages)
              .I(v.events).I(Since(v.first_ts));
          NoteCgroup(w, k.cgroup);
        });
    if (!drain_status_.ok()) return;
    // From the first drain on, so a run cut short still says its page
    // cache was counted here (analyze/run.h RecordingTier); Finish() writes
    // the whole ledger.
    w.Row(ledger_).T(name()).T("pc_totals").I(totals_).I(0);
    uint64_t now_slice = (NowNs(CLOCK_MONOTONIC) - start_ns_) / PAGECACHE_SLICE_NS;
    std::vector<pc_series_key> final_slices;
    series_live_ = 0;
    drain_status_ = ForEachEntry<pc_series_key, uint64_t>(
        bpf_map__fd(skel_->maps.pagecache_series), name(), "pc_series", [&](const pc_series_key& k, uint64_t pages) {
          w.Row(series_).I(int64_t{k.slice} * int64_t{PAGECACHE_SLICE_NS}).I(k.op).I(pages);
          if (k.slice + 2 <= now_slice)
            final_slices.push_back(k);
          else
            ++series_live_;
        });
    for (const pc_series_key& k : final_slices) bpf_map_delete_elem(bpf_map__fd(skel_->maps.pagecache_series), &k);
    series_rows_ += final_slices.size();
  }

  // Pages once, at the end: the chunks hold every page the run met.
  void Finish(Writer& w) override {
    if (uint64_t n = skel_->bss->pagecache_left_out)
      note += (note.empty() ? "" : " ") + std::to_string(n) +
              " page-cache events of other users' files left out (collect under sudo).";
    if (!lean_) return;
    // Deleter indexes back to deleters (bpf/pagecache.h).
    std::vector<uint64_t> deleter(PAGECACHE_DELETERS + 1, 0);
    for (uint32_t i = 1; i < PAGECACHE_DELETERS; ++i)
      bpf_map_lookup_elem(bpf_map__fd(skel_->maps.pagecache_deleter_hash), &i, &deleter[i]);
    uint64_t indexed = std::count_if(deleter.begin(), deleter.end(), [](uint64_t d) { return d != 0; });
    deleter[PAGECACHE_DELETERS] = PAGECACHE_DELETER_UNKNOWN;
    uint64_t chunks = 0, refaults = 0, more_refaults = 0;
    auto emit = [&](const pc_chunk_key& k, const pc_chunk_val& v) {
      ++chunks;
      uint64_t dev = KernelDevToUser(k.dev);
      for (uint32_t slot = 0; slot < PAGECACHE_CHUNK_PAGES; ++slot) {
        int64_t idx = static_cast<int64_t>(k.chunk << PAGECACHE_CHUNK_SHIFT | slot);
        if (v.first_us[slot])
          w.Row(page_row_).I(dev).I(k.ino).I(idx).I((int64_t{v.first_us[slot]} - 1) * 1000)
              .I(v.pid[slot]).I(v.tid[slot]).I(v.why[slot]);
        for (uint8_t g : v.refaults[slot]) {
          if (!g) continue;
          uint64_t d = deleter[g];
          w.Row(refault_row_).I(dev).I(k.ino).I(idx).I(DeleterOut(w, d)).I(StackOf(d));
          ++refaults;
        }
      }
      more_refaults += __builtin_popcountll(v.more_refaults);
    };
    // The spare map's chunks (few) first, so a chunk two CPUs made at once,
    // one in each map, is written once: the main map's, the one most of
    // its pages went to. The other is counted as lost.
    std::unordered_map<std::string, pc_chunk_val> spare;
    uint64_t spare_lost = 0;
    Status st = drain_status_;
    if (st.ok())
      st = ForEachEntry<pc_chunk_key, pc_chunk_val>(
          bpf_map__fd(skel_->maps.pagecache_chunks_spare), name(), "pc_chunks_spare",
          [&](const pc_chunk_key& k, const pc_chunk_val& v) {
            spare.emplace(std::string(reinterpret_cast<const char*>(&k), sizeof k), v);
          });
    uint64_t spare_chunks = spare.size();
    if (st.ok())
      st = ForEachEntry<pc_chunk_key, pc_chunk_val>(
          bpf_map__fd(skel_->maps.pagecache_chunks), name(), "pc_chunks", [&](const pc_chunk_key& k, const pc_chunk_val& v) {
            spare_lost += spare.erase(std::string(reinterpret_cast<const char*>(&k), sizeof k));
            emit(k, v);
          });
    for (auto& [key, v] : spare) {
      pc_chunk_key k;
      memcpy(&k, key.data(), sizeof k);
      emit(k, v);
    }
    if (!st.ok()) note += (note.empty() ? "" : " ") + st.error().message;
    std::vector<uint64_t> overflow = PerCpuCounters(bpf_map__fd(skel_->maps.pagecache_overflow), PC_OVERFLOW_MAX);
    // Refaults past the three deleters a page keeps are counted in
    // page_cache_total; only the per-page list (page_cache_page_refault)
    // misses them: its own ledger row.
    w.Row(ledger_).T("pagecache").T("pc_chunks").I(chunks - spare_chunks + spare_lost).I(overflow[PC_OVERFLOW_CHUNKS]);
    w.Row(ledger_).T("pagecache").T("pc_chunks_spare").I(spare_chunks).I(spare_lost);
    w.Row(ledger_).T("pagecache").T("pc_chunks.refaults").I(refaults).I(more_refaults);
    w.Row(ledger_).T("pagecache").T("pc_totals").I(totals_).I(overflow[PC_OVERFLOW_TOTALS]);
    w.Row(ledger_).T("pagecache").T("pc_series").I(series_rows_ + series_live_).I(overflow[PC_OVERFLOW_SERIES]);
    w.Row(ledger_).T("pagecache").T("pc_stacks_seen").I(stack_of_.size()).I(overflow[PC_OVERFLOW_STACKS]);
    // Past the index table, a deleter's pages still count; only who deleted
    // them before they came back is unknown.
    w.Row(ledger_).T("pagecache").T("pc_deleter_idx").I(indexed).I(overflow[PC_OVERFLOW_DELETERS]);
    // A stack sent twice is harmless; every other refusal loses counts.
    if (uint64_t lost = overflow[PC_OVERFLOW_CHUNKS] + spare_lost + overflow[PC_OVERFLOW_TOTALS] + overflow[PC_OVERFLOW_SERIES] +
                        overflow[PC_OVERFLOW_DELETERS])
      note += (note.empty() ? "" : " ") + std::string("lean page-cache maps were full ") + std::to_string(lost) +
              " times: the page-cache counts are lower bounds (run_aggregate); record with --detail full, or "
              "a shorter run.";
    if (more_refaults)
      note += (note.empty() ? "" : " ") + std::to_string(more_refaults) +
              " pages came back after more than 3 distinct deleters: the counts are whole, the hot ranges may "
              "miss those pages.";
  }

 private:
  // The cgroup's path under the mount ("" if it is gone).
  std::string PathOf(uint64_t id) {
    auto it = paths_.find(id);
    if (it == paths_.end()) {  // a cgroup made since the last walk
      g_walk_out = &paths_;
      g_walk_root_len = mount_.size();
      nftw(mount_.c_str(), WalkOne, 16, FTW_PHYS | FTW_MOUNT);
      it = paths_.find(id);
    }
    return it == paths_.end() ? "" : it->second;
  }

  // memory.limit_in_bytes of the cgroup at `rel`; -1 if unreadable.
  int64_t LimitOf(const std::string& rel) {
    std::ifstream f(mount_ + (rel == "/" ? "" : rel) + "/memory.limit_in_bytes");
    int64_t limit;
    return f >> limit ? limit : -1;
  }

  // Writes the memory_cgroup row the first time an id is seen: path and
  // memory.limit_in_bytes as they are now. Returns the path.
  std::string NoteCgroup(Writer& w, uint64_t id) {
    if (!id || mount_.empty()) return "";
    if (!cgroups_seen_.insert(id).second) return paths_.count(id) ? paths_[id] : "";
    std::string rel = PathOf(id);
    int64_t limit = rel.empty() ? -1 : LimitOf(rel);
    if (limit >= 0)
      w.Row(cgroup_).I(id).T(rel).I(limit);
    else
      w.Row(cgroup_).I(id).T(rel).Null();  // removed before we looked
    return rel;
  }

  // A cgroup of the traced tree: recorded, and filtered on if it or an
  // ancestor has a limit (only then does reclaim run inside it).
  void Admit(Writer& w, uint64_t id) {
    std::string rel = NoteCgroup(w, id);
    int64_t limit = kUnlimited;
    for (std::string p = rel; !p.empty() && p != "/"; p = p.substr(0, std::max<size_t>(p.rfind('/'), 1))) {
      int64_t l = LimitOf(p);
      if (l >= 0) limit = std::min(limit, l);
    }
    if (limit >= kUnlimited) return;
    uint8_t one = 1;
    bpf_map_update_elem(bpf_map__fd(skel_->maps.pagecache_memcgs), &id, &one, BPF_ANY);
  }

  // /proc/PID/maps: "start-end perms offset MAJ:MIN inode path", dev in hex.
  void SeedMappedFiles(uint32_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
    std::string line, range, perms, off, dev;
    uint64_t ino;
    int fd = bpf_map__fd(skel_->maps.pagecache_files);
    while (std::getline(f, line)) {
      std::istringstream is(line);
      if (!(is >> range >> perms >> off >> dev >> ino) || !ino) continue;
      unsigned major = 0, minor = 0;
      if (sscanf(dev.c_str(), "%x:%x", &major, &minor) != 2) continue;
      struct { uint64_t dev, ino; } key = {uint64_t(major) << 20 | minor, ino};
      uint8_t one = 1;
      bpf_map_update_elem(fd, &key, &one, BPF_ANY);
    }
  }

  int64_t Since(uint64_t ktime) const { return ktime ? static_cast<int64_t>(ktime - start_ns_) : 0; }
  int64_t CommId(const std::string& comm) {
    if (comm.empty()) return 0;
    return comm_ids_.try_emplace(comm, static_cast<int64_t>(comm_ids_.size()) + 1).first->second;
  }
  // A deleter as stored. Its hash is of the stack's real addresses: with
  // synthetic kernel addresses (collect/kallsyms.h) it could be matched
  // against a known kernel's stacks at each possible KASLR offset, so its
  // hash bits are stored keyed with a secret of this run (equal deleters
  // stay equal); the kind bits and the reserved values stay.
  int64_t DeleterOut(const Writer& w, uint64_t d) {
    if (!w.kernel_addresses_mapped() || !d || d == PAGECACHE_DELETER_UNKNOWN) return static_cast<int64_t>(d);
    if (!deleter_key_ && getrandom(&deleter_key_, sizeof deleter_key_, 0) != sizeof deleter_key_)
      deleter_key_ = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(time(nullptr));
    constexpr uint64_t kHashBits = (uint64_t{1} << PAGECACHE_KIND_SHIFT) - 1;
    uint64_t x = (d & kHashBits) ^ deleter_key_;  // splitmix64's finalizer
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x = (x ^ (x >> 31)) & kHashBits;
    if (!x || x == PAGECACHE_DELETER_UNKNOWN) x = 1;
    return static_cast<int64_t>((d & ~kHashBits) | x);
  }
  int64_t StackOf(uint64_t deleter) const {
    auto it = stack_of_.find(deleter);
    return it == stack_of_.end() ? 0 : it->second;
  }

  int page_ = -1, ra_ = -1, cgroup_ = -1;
  int total_ = -1, page_row_ = -1, refault_row_ = -1, series_ = -1, reuse_ = -1, ledger_ = -1;
  std::unordered_map<uint64_t, int64_t> stack_of_;  // deleter -> stack.id
  uint64_t deleter_key_ = 0;                        // DeleterOut's secret
  std::unordered_map<std::string, int64_t> comm_ids_;  // page_cache_total.comm_id
  uint64_t totals_ = 0;       // keys in the totals map at the last drain
  uint64_t series_rows_ = 0;  // series slices written final and removed from the map
  uint64_t series_live_ = 0;  // slices written by the last drain and still in the map
  // What each totals key's row says now: its key's bytes -> pages, events, stack id.
  std::unordered_map<std::string, std::array<int64_t, 3>> written_;
  Status drain_status_;
  std::string mount_;
  uint64_t root_id_ = 0;
  std::unordered_map<uint64_t, std::string> paths_;
  std::unordered_set<uint64_t> cgroups_seen_;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakePagecacheGroup() { return std::make_unique<PagecacheGroup>(); }

}  // namespace syspgo
