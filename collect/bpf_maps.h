//===- bpf_maps.h - reading a probe group's BPF maps from user space ------===//
// The lean tiers drain in-kernel aggregates (hash maps, per-CPU counters);
// these helpers read them in batches and sum per-CPU values.
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
