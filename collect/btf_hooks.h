//===- btf_hooks.h - switch off tp_btf programs this kernel lacks --------===//
// A tp_btf program attaches to the tracepoint named in its section; the
// kernel has it when vmlinux BTF has the typedef btf_trace_<name>. Checking
// before load turns a missing tracepoint into a note instead of a failed
// load of the whole group (STYLE.md #2).
#pragma once
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace syspgo {

// The kernel's BTF for the groups' own lookups while they load, parsed
// once: each parse reads /sys/kernel/btf/vmlinux (5 MiB, a page a read)
// and five groups ask. With it, the tracepoints it has (the names of its
// btf_trace_<name> typedefs), gathered in one pass: btf__find_by_name_kind
// walks all the kernel's types on every call, and the groups ask about
// dozens of tracepoints. The collector drops both once every group is
// loaded, before the ring buffers are mapped. Null and empty if the kernel
// has no BTF. Not thread-safe: groups load one after the other.
struct KernelBtfCache {
  btf* parsed = nullptr;
  // Sorted; into the BTF's own strings, so no string is allocated (the
  // heap under the parsed BTF is reused once it is freed, collector.cc).
  std::vector<std::string_view> tracepoints;
};
inline KernelBtfCache& KernelBtfSlot() {
  static KernelBtfCache cache;
  return cache;
}
inline const btf* KernelBtf() {
  KernelBtfCache& c = KernelBtfSlot();
  // Reserved before the parse: allocated or grown after it, the index
  // would sit inside the heap the freed BTF leaves to the next group's
  // parse and split it, and raise the peak RSS. A kernel has a few
  // thousand tracepoints.
  if (!c.parsed) c.tracepoints.reserve(4096);
  if (!c.parsed && (c.parsed = btf__load_vmlinux_btf())) {
    const std::string_view prefix = "btf_trace_";
    for (uint32_t id = 1, n = btf__type_cnt(c.parsed); id < n; ++id) {
      const btf_type* t = btf__type_by_id(c.parsed, id);
      if (!btf_is_typedef(t)) continue;
      std::string_view name = btf__name_by_offset(c.parsed, t->name_off);
      if (name.starts_with(prefix)) c.tracepoints.push_back(name.substr(prefix.size()));
    }
    std::sort(c.tracepoints.begin(), c.tracepoints.end());
  }
  return c.parsed;
}
inline void ReleaseKernelBtf() {
  KernelBtfCache& c = KernelBtfSlot();
  btf__free(c.parsed);
  c = {};
}
// The kernel has the tracepoint (a tp_btf program can attach to it).
inline bool KernelHasTracepoint(const std::string& tp) {
  if (!KernelBtf()) return false;  // parses it and fills the index, once
  const auto& tps = KernelBtfSlot().tracepoints;
  return std::binary_search(tps.begin(), tps.end(), std::string_view(tp));
}
inline bool KernelHasFunction(const char* name) {
  const btf* k = KernelBtf();
  return k && btf__find_by_name_kind(k, name, BTF_KIND_FUNC) > 0;
}

// "a, b" for a note.
inline std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace syspgo
