//===- traced_set.h - the processes of the recording, shared with BPF ----===//
// The `targets` map of bpf/common.bpf.h: one bit per thread group id, which
// every BPF program tests before anything else and which proc's programs
// set and clear as processes fork, exec out of the recording and exit. The
// collector adds the processes a run starts from and those that join a
// followed cgroup, and the groups ask whether a process is still in.
//
// The collector changes bits only by atomic or and and on its mapping of
// the map, the instructions the BPF programs use, so the two never lose
// each other's changes. The alternatives were a whole word written through
// bpf_map_update_elem, a read-modify-write that undoes a bit the kernel
// sets in the same word meanwhile (a fork of another target), or a
// SEC("syscall") program run per change: a syscall each, for what one
// locked instruction does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/result.h"

namespace syspgo {

class TracedSet {
 public:
  // The map's entries (64-bit words) for this host's pid_max, set between
  // open and load. A pid at or above it cannot exist unless root raises
  // pid_max during the run; such a process is not followed (Add and the
  // kernel's fork both find no word for it).
  static uint32_t Words();
  // The map `fd` (loaded, Words() entries), mapped; the fd stays the caller's.
  static Result<std::shared_ptr<TracedSet>> Map(int fd);
  ~TracedSet();
  TracedSet(const TracedSet&) = delete;
  TracedSet& operator=(const TracedSet&) = delete;

  void Add(uint32_t pid);
  void Remove(uint32_t pid);
  bool Has(uint32_t pid) const;

 private:
  TracedSet(uint64_t* words, size_t n, size_t bytes) : words_(words), n_(n), bytes_(bytes) {}
  uint64_t* word(uint32_t pid) const { return pid / 64 < n_ ? &words_[pid / 64] : nullptr; }
  uint64_t* words_;
  size_t n_;      // words
  size_t bytes_;  // mapped
};

}  // namespace syspgo
