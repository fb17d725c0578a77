//===- probe_group.cc - helpers every probe group's loader shares --------===//
#include "collect/probe_group.h"

#include <bpf/bpf.h>
#include <sys/sysmacros.h>

#include <cstring>

namespace syspgo {

const char* DetailName(Detail d) { return d == Detail::kFull ? "full" : "lean"; }

uint64_t KernelDevToUser(uint64_t kdev) { return makedev(kdev >> 20, kdev & 0xfffff); }

int ExitStatusFromWait(uint32_t code) {
  if (code & 0x7f) return 128 + (code & 0x7f);
  return (code >> 8) & 0xff;
}

std::string JoinNulSeparated(const char* p, size_t n) {
  std::string s(p, n);
  for (auto& c : s)
    if (c == '\0') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
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

static Status ReuseOne(bpf_object* obj, const char* map, int fd, const char* group) {
  bpf_map* m = bpf_object__find_map_by_name(obj, map);
  if (!m) return MakeError(std::string("probe group '") + group + "' has no '" + map + "' map (bpf/common.bpf.h)");
  if (int err = bpf_map__reuse_fd(m, fd)) return LibbpfError(group, std::string("share the ") + map + " map", err);
  return {};
}

Status ReuseSharedMaps(bpf_object* obj, const GroupContext& ctx, const char* group) {
  SYSPGO_TRY(ReuseOne(obj, "targets", ctx.targets_fd, group));
  return ReuseOne(obj, "drops", ctx.drops_fd, group);
}

Status SetRingbufSize(bpf_object* obj, uint64_t bytes, const char* group) {
  bpf_map* m = bpf_object__find_map_by_name(obj, "events");
  if (!m) return MakeError(std::string("probe group '") + group + "' has no 'events' ring buffer");
  if (int err = bpf_map__set_max_entries(m, static_cast<uint32_t>(bytes)))
    return LibbpfError(group, "size the ring buffer", err);
  return {};
}

}  // namespace syspgo
