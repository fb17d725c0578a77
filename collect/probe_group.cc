//===- probe_group.cc - helpers every probe group's loader shares --------===//
#include "collect/probe_group.h"

#include <bpf/bpf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "collect/btf_hooks.h"
#include "common/identity.h"
#include "syspgo_bpf.skel.h"

namespace syspgo {

const char* DetailName(Detail d) { return d == Detail::kFull ? "full" : "lean"; }

uint64_t KernelDevToUser(uint64_t kdev) { return makedev(kdev >> 20, kdev & 0xfffff); }

int ExitStatusFromWait(uint32_t code) {
  if (code & 0x7f) return 128 + (code & 0x7f);
  return (code >> 8) & 0xff;
}

std::optional<uint64_t> RegularFileSize(const std::string& path, uint64_t dev, uint64_t ino) {
  struct stat sb {};
  if (path.empty() || stat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_dev != dev || sb.st_ino != ino)
    return std::nullopt;
  return static_cast<uint64_t>(sb.st_size);
}

std::string JoinNulSeparated(const char* p, size_t n) {
  std::string s(p, n);
  for (auto& c : s)
    if (c == '\0') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

int64_t StoreStack(Writer& w, const __u64* ips, size_t n, size_t max) {
  n = std::min(n, max);
  while (n && !ips[n - 1]) --n;
  return w.StackId(reinterpret_cast<const uint64_t*>(ips), n);
}

std::optional<uint32_t> OnlyForUser() {
  const auto& user = InvokingUser();
  if (!user.ok()) return UINT32_MAX;
  if (!user.value()) return std::nullopt;
  return user.value()->uid;
}

Error LibbpfError(const char* group, const std::string& what, int err) {
  err = err < 0 ? -err : err;
  std::string hint;
  if (err == EPERM || err == EACCES)
    hint = " The kernel refused: run as root (CAP_BPF and CAP_PERFMON), and check that kernel lockdown allows this hook.";
  else if (err == ENOENT || err == ESRCH)
    hint = " This kernel lacks the hook (tracepoint or BTF type) this group uses.";
  else if (err == E2BIG || err == EINVAL)
    hint = " The verifier or the kernel rejected the program; run with -vv to see libbpf's log.";
  return MakeError("probe group '" + std::string(group) + "': cannot " + what + ": " + strerror(err) + "." + hint,
                   err);
}

// The linked object, loaded once for the groups in it and destroyed when the
// last of them goes.
struct LoadedObject {
  syspgo_bpf* skel = nullptr;
  ~LoadedObject() { syspgo_bpf__destroy(skel); }
};

ProbeGroup::ProbeGroup(syspgo_group id) : spec_(&GroupSpecOf(id)) {}

ProbeGroup::~ProbeGroup() { Detach(); }

void ProbeGroup::Detach() {
  for (bpf_link* l : links_) bpf_link__destroy(l);
  links_.clear();
}

bool ProbeGroup::Owns(const char* bpf_name) const {
  size_t n = strlen(name());
  return strncmp(bpf_name, name(), n) == 0 && bpf_name[n] == '_';
}

int ProbeGroup::ringbuf_fd() const {
  return bpf_map__fd(bpf_object__find_map_by_name(skel_->obj, events_map().c_str()));
}

bool ProbeGroup::StillTraced(uint32_t pid) const { return targets_ && targets_->Has(pid); }

Status ProbeGroup::Attach(const GroupContext&) {
  bpf_program* p;
  bpf_object__for_each_program(p, skel_->obj) {
    if (!Owns(bpf_program__name(p)) || !bpf_program__autoload(p) || !bpf_program__autoattach(p)) continue;
    bpf_link* l = bpf_program__attach(p);
    if (!l) return LibbpfError(name(), std::string("attach ") + bpf_program__name(p), -errno);
    links_.push_back(l);
  }
  return {};
}

std::vector<std::string> ProbeGroup::DisableMissingTracepoints() {
  std::vector<std::string> missing;
  const std::string prefix = "tp_btf/";
  bpf_program* p;
  bpf_object__for_each_program(p, skel_->obj) {
    std::string sec = bpf_program__section_name(p);
    if (!Owns(bpf_program__name(p)) || sec.compare(0, prefix.size(), prefix) != 0) continue;
    std::string tp = sec.substr(prefix.size());
    if (KernelHasTracepoint(tp)) continue;
    bpf_program__set_autoload(p, false);
    missing.push_back(tp);
  }
  return missing;
}

bool SharedBpfMap(const bpf_map* m) {
  const char* n = bpf_map__name(m);
  return bpf_map__is_internal(m) || !strcmp(n, "targets") || !strcmp(n, "drops");
}

namespace {

bool OwnedByAny(const std::vector<ProbeGroup*>& groups, const char* bpf_name) {
  for (const ProbeGroup* g : groups)
    if (g->Owns(bpf_name)) return true;
  return false;
}

// The shared maps of an object loaded earlier, for an object loaded after
// it (LoadProbeGroups' one-group-at-a-time path).
Status ReuseSharedMaps(bpf_object* obj, const GroupContext& ctx, const char* group) {
  for (auto [map, fd] : {std::pair{"targets", ctx.targets_fd}, std::pair{"drops", ctx.drops_fd}}) {
    bpf_map* m = bpf_object__find_map_by_name(obj, map);
    if (!m) return MakeError(std::string("the BPF object has no '") + map + "' map (bpf/common.bpf.h)");
    if (int err = bpf_map__reuse_fd(m, fd)) return LibbpfError(group, std::string("share the ") + map + " map", err);
  }
  return {};
}

Status SetRingbufSize(const ProbeGroup& g, bpf_object* obj, uint64_t bytes) {
  std::string map = g.events_map();
  bpf_map* m = bpf_object__find_map_by_name(obj, map.c_str());
  if (!m) return MakeError(std::string("probe group '") + g.name() + "' has no '" + map + "' ring buffer");
  if (int err = bpf_map__set_max_entries(m, static_cast<uint32_t>(bytes)))
    return LibbpfError(g.name(), "size the ring buffer", err);
  return {};
}

}  // namespace

// One object for the groups of `unit`; the programs and maps of every other
// group stay out of the kernel. A group whose Configure() or Attach() fails
// gets its error in *results and the others go on; the return value is the
// error that made the whole object fail to open or load.
Status LoadTogether(const std::vector<ProbeGroup*>& unit, GroupContext& ctx, std::map<ProbeGroup*, Status>* results) {
  const char* first = unit.empty() ? "proc" : unit.front()->name();
  auto obj = std::make_shared<LoadedObject>();
  obj->skel = syspgo_bpf__open();
  if (!obj->skel) return LibbpfError(first, "open the BPF object", -errno);
  syspgo_bpf* skel = obj->skel;
  skel->rodata->wakeup_bytes = ctx.wakeup_bytes();
  skel->rodata->lean = ctx.opts->detail == Detail::kLean;
  if (ctx.targets_fd >= 0) {
    SYSPGO_TRY(ReuseSharedMaps(skel->obj, ctx, first));
  } else if (int err = bpf_map__set_max_entries(skel->maps.targets, TracedSet::Words())) {
    return LibbpfError(first, "size the targets map", err);
  }
  std::vector<ProbeGroup*> in;  // the groups that are configured
  for (ProbeGroup* g : unit) {
    g->skel_ = skel;
    g->start_ns_ = ctx.start_ns;
    g->lean_ = ctx.opts->detail == Detail::kLean;
    Status st = SetRingbufSize(*g, skel->obj, ctx.opts->ringbuf_bytes);
    if (st.ok()) st = g->Configure(skel, ctx);
    if (st.ok()) {
      in.push_back(g);
    } else {
      (*results)[g] = st;
      g->skel_ = nullptr;  // this object does not outlive the load without it
    }
  }
  if (in.empty()) return {};
  bpf_program* p;
  bpf_object__for_each_program(p, skel->obj) {
    if (!OwnedByAny(in, bpf_program__name(p))) bpf_program__set_autoload(p, false);
  }
  bpf_map* m;
  bpf_object__for_each_map(m, skel->obj) {
    if (!SharedBpfMap(m) && !OwnedByAny(in, bpf_map__name(m))) bpf_map__set_autocreate(m, false);
  }
  if (int err = syspgo_bpf__load(skel)) {
    for (ProbeGroup* g : in) g->skel_ = nullptr;
    return LibbpfError(in.size() == 1 ? in.front()->name() : first, "load the BPF programs", err);
  }
  if (ctx.targets_fd < 0) {
    auto targets = TracedSet::Map(bpf_map__fd(skel->maps.targets));
    if (!targets) {
      for (ProbeGroup* g : in) g->skel_ = nullptr;
      return targets.error();
    }
    ctx.targets = *targets;
    ctx.targets_fd = bpf_map__fd(skel->maps.targets);
    ctx.drops_fd = bpf_map__fd(skel->maps.drops);
  }
  for (ProbeGroup* g : in) {
    g->targets_ = ctx.targets;
    Status st = g->Attach(ctx);
    if (st.ok()) {
      g->object_ = obj;
    } else {
      g->Detach();
      g->skel_ = nullptr;
    }
    (*results)[g] = st;
  }
  return {};
}

std::vector<Status> LoadProbeGroups(const std::vector<ProbeGroup*>& groups, GroupContext& ctx) {
  std::map<ProbeGroup*, Status> results;
  Status together = LoadTogether(groups, ctx, &results);
  if (!together.ok()) {
    // Alone, each group meets only its own programs' verdicts.
    for (ProbeGroup* g : groups) {
      if (results.count(g)) continue;  // its Configure() failed already
      Status st = LoadTogether({g}, ctx, &results);
      if (!st.ok()) results[g] = st;
      if (g->id() == SYSPGO_GROUP_PROC && !st.ok()) break;  // nothing can be followed without it
    }
  }
  std::vector<Status> out;
  for (ProbeGroup* g : groups) {
    if (results.count(g)) out.push_back(results[g]);
    else out.push_back(MakeError(std::string("probe group '") + g->name() + "' was not loaded: proc failed"));
  }
  return out;
}

}  // namespace syspgo
