//===- skeleton.h - the common load sequence for a skeleton-based group ---===//
// SkelGroup<S> runs the fixed loader order for one bpftool skeleton S:
// open, shared rodata (group id, wakeup threshold), ring buffer size, reuse
// of the shared maps, the group's own Configure(), load, attach. The
// skeleton is destroyed with the group (RAII instead of goto cleanup).
#pragma once
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "collect/probe_group.h"

namespace syspgo {

template <typename S>
struct SkelOps {
  S* (*open)();
  int (*load)(S*);
  int (*attach)(S*);
  void (*destroy)(S*);
};

// Expands to the SkelOps of the skeleton generated with `name NAME`.
#define SYSPGO_SKEL_OPS(NAME) \
  ::syspgo::SkelOps<struct NAME>{&NAME##__open, &NAME##__load, &NAME##__attach, &NAME##__destroy}

template <typename S>
class SkelGroup : public ProbeGroup {
 public:
  explicit SkelGroup(SkelOps<S> ops) : ops_(ops) {}
  ~SkelGroup() override {
    if (skel_) ops_.destroy(skel_);
  }

  Status Load(const GroupContext& ctx) override {
    start_ns_ = ctx.start_ns;
    lean_ = ctx.opts->detail == Detail::kLean;
    skel_ = ops_.open();
    if (!skel_) return LibbpfError(name(), "open the BPF object", -errno);
    skel_->rodata->group_id = id();
    skel_->rodata->wakeup_bytes = ctx.wakeup_bytes();
    SYSPGO_TRY(SetRingbufSize(skel_->obj, ctx.opts->ringbuf_bytes, name()));
    if (ctx.targets_fd >= 0) SYSPGO_TRY(ReuseSharedMaps(skel_->obj, ctx, name()));
    SYSPGO_TRY(Configure(skel_, ctx));
    if (int err = ops_.load(skel_)) return LibbpfError(name(), "load the BPF programs", err);
    if (int err = ops_.attach(skel_)) return LibbpfError(name(), "attach the BPF programs", err);
    return {};
  }
  bpf_object* object() override { return skel_ ? skel_->obj : nullptr; }
  int ringbuf_fd() override { return bpf_map__fd(skel_->maps.events); }

 protected:
  // Group-specific settings between open and load: rodata, map sizes,
  // bpf_program__set_autoload(prog, false) for hooks this kernel lacks.
  virtual Status Configure(S*, const GroupContext&) { return {}; }
  S* skel_ = nullptr;
  uint64_t start_ns_ = 0;  // GroupContext::start_ns: an event's ts minus this is the row's ts
  bool lean_ = false;      // collect --detail lean

 private:
  SkelOps<S> ops_;
};

// The lean tiers' map reading (pagecache, fileio): every entry of a BPF
// hash map in batches (one syscall per batch instead of two per entry).
// `per_key` values come with each key: 1, or for a per-CPU map the number
// of possible CPUs (its values must then be a multiple of 8 bytes).
template <typename K, typename V, typename Fn>
Status ForEachEntryValues(int fd, const char* group, const char* map, size_t per_key, Fn fn) {
  const uint32_t batch = std::max<size_t>(64, (256 << 10) / (sizeof(K) + per_key * sizeof(V)));  // 256 KiB a batch
  std::vector<K> keys(batch);
  std::vector<V> vals(batch * per_key);
  uint64_t token = 0;
  bool first = true;
  for (;;) {
    uint32_t n = batch;
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    int err = bpf_map_lookup_batch(fd, first ? nullptr : &token, &token, keys.data(), vals.data(), &n, &opts);
    first = false;
    if (err && errno != ENOENT)
      return MakeError(std::string("probe group '") + group + "': reading the kernel map " + map + " failed: " +
                       strerror(errno) + ". Its table is incomplete; record with --detail full instead.");
    for (uint32_t i = 0; i < n; ++i) fn(keys[i], &vals[i * per_key]);
    if (err) return {};  // ENOENT: that was the last batch
  }
}

template <typename K, typename V, typename Fn>
Status ForEachEntry(int fd, const char* group, const char* map, Fn fn) {
  return ForEachEntryValues<K, V>(fd, group, map, 1, [&](const K& k, const V* v) { fn(k, *v); });
}

// The number of keys in a BPF hash map (a ledger's entries), or an error.
template <typename K, typename V>
Result<uint64_t> CountEntries(int fd, const char* group, const char* map) {
  uint64_t n = 0;
  Status st = ForEachEntry<K, V>(fd, group, map, [&](const K&, const V&) { ++n; });
  if (!st.ok()) return st.error();
  return n;
}

inline size_t PossibleCpus() {
  int n = libbpf_num_possible_cpus();
  return n > 0 ? n : 1;
}

// A per-CPU array's __u64 slots summed over CPUs (the overflow counters).
inline std::vector<uint64_t> PerCpuCounters(int fd, uint32_t slots) {
  std::vector<uint64_t> sum(slots);
  std::vector<uint64_t> per_cpu(PossibleCpus());
  for (uint32_t i = 0; i < slots; ++i)
    if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) == 0)
      for (uint64_t n : per_cpu) sum[i] += n;
  return sum;
}

}  // namespace syspgo
