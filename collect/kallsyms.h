//===- kallsyms.h - the kernel's code symbols, read once per boot ---------===//
// A run stores the kernel symbols its kernel stacks fall in, so that the
// stacks resolve later on any machine. /proc/kallsyms is the only source,
// and reading it is dear: the kernel formats its 120k lines on every read
// (~55 ms of system time here, the largest single cost of recording
// `true`). Those lines change only when the kernel boots or a module is
// loaded or unloaded, so the code symbols are kept, sorted, in a cache
// that belongs to syspgo (root): /run/syspgo/kallsyms, on tmpfs, keyed by
// the boot id and the loaded modules (name, size, address). A key that
// does not match, or a cache file that is not root's own regular file,
// means /proc/kallsyms is read again and the cache replaced. perf keeps
// its kallsyms copies in ~/.debug for the same reason.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace syspgo {

class KernelSymbols {
 public:
  // Where the cache lives; tests point `dir` elsewhere. The directory is
  // made (0700) if missing and used only if it is root's and no one
  // else's to write.
  static constexpr const char* kCacheDir = "/run/syspgo";

  // The code symbols (types t, T, w, W) with an address, from the cache in
  // `cache_dir` when it matches this boot and these modules, else from
  // /proc/kallsyms (the cache is then written again, when it can be).
  // Symbols of BPF programs and of the kernel's own dynamic code (ftrace
  // trampolines, kprobe slots) are left out: they come and go without a
  // module load, and the symbolizer names none of them.
  static KernelSymbols Load(const std::string& cache_dir = kCacheDir);

  // For each address of `sorted_ips` (ascending), the line of the symbol at
  // or below it, as /proc/kallsyms prints it; each line once, in address
  // order, newline-terminated. Of symbols at one address, the last listed.
  std::string LinesFor(const std::vector<uint64_t>& sorted_ips) const;

  // True if /proc/kallsyms could be read and showed real addresses.
  bool readable() const { return readable_; }
  bool hidden() const { return hidden_; }  // all addresses 0 (kernel.kptr_restrict)
  bool from_cache() const { return from_cache_; }
  // Every symbol line kept, sorted by address.
  std::string_view text() const { return text_; }

 private:
  // The start of the line after the one `at` is in (text_.size() at the end).
  size_t NextLine(size_t at) const;

  // The lines: read from /proc/kallsyms into `owned_`, or the cache file
  // mapped (a run needs a few hundred of its 120k lines: no copy, no index;
  // LinesFor searches the bytes).
  std::string owned_;
  std::shared_ptr<const void> mapping_;
  std::string_view text_;
  bool readable_ = false, hidden_ = false, from_cache_ = false;
};

}  // namespace syspgo
