//===- pagecache_group.cc - loader for bpf/pagecache.bpf.c ---------------===//
// Page-cache additions and deletions (with the kernel stack of each
// deletion) and readahead decisions. Memory cgroups are v1 here: the loader
// finds the memory hierarchy (/proc/cgroups, /proc/mounts) for the kernel
// side, turns every cgroup id the kernel reports into a memory_cgroup row
// with its path and limit as they are while the run goes on, and admits the
// traced tree's cgroups that have a limit into the kernel's filter (the
// page cache of a cgroup without one is no story of this program). When
// attaching, the process's mapped files join the filter too.
#include <bpf/bpf.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "bpf/pagecache.h"
#include "collect/btf_hooks.h"
#include "collect/skeleton.h"
#include "common/util.h"
#include "pagecache.skel.h"

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

class PagecacheGroup : public SkelGroup<pagecache> {
 public:
  PagecacheGroup() : SkelGroup(SYSPGO_SKEL_OPS(pagecache)) {}
  const char* name() const override { return "pagecache"; }
  syspgo_group id() const override { return SYSPGO_GROUP_PAGECACHE; }
  bool kernel_stacks() const override { return true; }

  void DeclareTables(Writer& w) override {
    page_ = w.Table("page_cache", {"ts", "op", "pid", "tid", "comm", "dev", "ino", "idx", "pages", "task_cgroup",
                                   "page_cgroup", "why", "stack_id"});
    ra_ = w.Table("readahead", {"ts", "pid", "tid", "kind", "dev", "ino", "idx", "pages", "async_pages"});
    cgroup_ = w.Table("memory_cgroup", {"id", "path", "limit_bytes"}, "INSERT OR IGNORE");
  }

  Status Load(const GroupContext& ctx) override {
    start_ns_ = ctx.start_ns;
    return SkelGroup::Load(ctx);
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
        bpf_map_update_elem(bpf_map__fd(skel_->maps.memcgs_seen), &id, &one, BPF_ANY);
        Admit(w, id);
      }
    }
    if (attached) SeedMappedFiles(pid);
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    int64_t ts = static_cast<int64_t>(h->ts - start_ns_);
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
  Status Configure(pagecache* skel, const GroupContext&) override {
    std::vector<std::string> missing = DisableMissingTracepoints(skel->obj);
    for (const char* must : {"mm_filemap_add_to_page_cache", "mm_filemap_delete_from_page_cache"})
      if (std::find(missing.begin(), missing.end(), must) != missing.end())
        return MakeError(std::string("probe group 'pagecache': this kernel has no filemap:") + must +
                         " tracepoint (Linux 5.16+ with folios).");
    if (!missing.empty()) note = "missing tracepoints " + JoinNames(missing) + "; ";

    uint32_t hierarchy = MemoryHierarchyId();
    mount_ = hierarchy ? MemoryMount() : "";
    btf* vmlinux = btf__load_vmlinux_btf();
    bool kfunc = vmlinux && btf__find_by_name_kind(vmlinux, "bpf_task_get_cgroup1", BTF_KIND_FUNC) > 0;
    btf__free(vmlinux);
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
    return {};
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
    bpf_map_update_elem(bpf_map__fd(skel_->maps.memcgs), &id, &one, BPF_ANY);
  }

  // /proc/PID/maps: "start-end perms offset MAJ:MIN inode path", dev in hex.
  void SeedMappedFiles(uint32_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
    std::string line, range, perms, off, dev;
    uint64_t ino;
    int fd = bpf_map__fd(skel_->maps.files);
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

  uint64_t start_ns_ = 0;
  int page_ = -1, ra_ = -1, cgroup_ = -1;
  std::string mount_;
  uint64_t root_id_ = 0;
  std::unordered_map<uint64_t, std::string> paths_;
  std::unordered_set<uint64_t> cgroups_seen_;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakePagecacheGroup() { return std::make_unique<PagecacheGroup>(); }

}  // namespace syspgo
