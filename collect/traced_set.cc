//===- traced_set.cc - the processes of the recording, shared with BPF ---===//
#include "collect/traced_set.h"

#include <bpf/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/util.h"

namespace syspgo {

uint32_t TracedSet::Words() {
  constexpr uint64_t kPidMaxLimit = 4u << 20;  // PID_MAX_LIMIT on 64-bit: what pid_max cannot exceed
  uint64_t pid_max = strtoull(ReadFileOrEmpty("/proc/sys/kernel/pid_max").c_str(), nullptr, 10);
  if (pid_max == 0 || pid_max > kPidMaxLimit) pid_max = kPidMaxLimit;
  return static_cast<uint32_t>((pid_max + 63) / 64);
}

Result<std::shared_ptr<TracedSet>> TracedSet::Map(int fd) {
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len))
    return MakeError(std::string("cannot read the BPF map 'targets': ") + strerror(errno), errno);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t bytes = (size_t{info.max_entries} * sizeof(uint64_t) + page - 1) / page * page;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return MakeError(std::string("cannot map the BPF map 'targets' (") + std::to_string(bytes) +
                         " bytes) to follow the processes recorded: " + strerror(errno),
                     errno);
  return std::shared_ptr<TracedSet>(new TracedSet(static_cast<uint64_t*>(p), info.max_entries, bytes));
}

TracedSet::~TracedSet() { munmap(words_, bytes_); }

void TracedSet::Add(uint32_t pid) {
  if (uint64_t* w = word(pid)) std::atomic_ref<uint64_t>(*w).fetch_or(uint64_t{1} << (pid % 64));
}

void TracedSet::Remove(uint32_t pid) {
  if (uint64_t* w = word(pid)) std::atomic_ref<uint64_t>(*w).fetch_and(~(uint64_t{1} << (pid % 64)));
}

bool TracedSet::Has(uint32_t pid) const {
  uint64_t* w = word(pid);
  return w && (std::atomic_ref<uint64_t>(*w).load() >> (pid % 64)) & 1;
}

}  // namespace syspgo
