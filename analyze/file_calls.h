//===- file_calls.h - the file syscalls by what they do -------------------===//
// The data layer reads the calls (analyze/data/file_calls.h); this says
// which numbers read, write, sync and open.
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>

#include "bpf/syscalls.h"

namespace syspgo {

// The file syscalls by what they do (bpf/syscalls.h has the numbers, the
// syscall_name table the names).
inline constexpr int64_t kReadCalls[] = {NR_read, NR_pread64, NR_readv, NR_preadv, NR_preadv2};
inline constexpr int64_t kWriteCalls[] = {NR_write, NR_pwrite64, NR_writev, NR_pwritev, NR_pwritev2};
inline constexpr int64_t kSyncCalls[] = {NR_fsync, NR_fdatasync, NR_sync_file_range};
inline constexpr int64_t kOpenCalls[] = {NR_open, NR_openat, NR_openat2};
inline constexpr int64_t kReadlinkCalls[] = {NR_readlink, NR_readlinkat};

template <size_t N>
bool IsOneOf(const int64_t (&calls)[N], int64_t nr) {
  return std::find(std::begin(calls), std::end(calls), nr) != std::end(calls);
}
inline bool IsReadCall(int64_t nr) { return IsOneOf(kReadCalls, nr); }
inline bool IsWriteCall(int64_t nr) { return IsOneOf(kWriteCalls, nr); }
inline bool IsSyncCall(int64_t nr) { return IsOneOf(kSyncCalls, nr); }
inline bool IsOpenCall(int64_t nr) { return IsOneOf(kOpenCalls, nr); }

}  // namespace syspgo
