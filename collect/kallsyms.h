//===- kallsyms.h - the kernel's code symbols, read once per boot ---------===//
// A run stores the kernel symbols its kernel stacks fall in, so that the
// stacks resolve later on any machine. /proc/kallsyms is the only source,
// and reading it is dear: the kernel formats its hundred thousand lines or
// more on every read, in system time that a short recording would spend
// mostly there. Those lines change only when the kernel boots or a module is
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
#include <unordered_map>
#include <vector>

namespace syspgo {

class KernelSymbols {
 public:
  KernelSymbols() = default;
  // Moves keep text() pointing into the moved lines.
  KernelSymbols(KernelSymbols&& o) noexcept { *this = std::move(o); }
  KernelSymbols& operator=(KernelSymbols&& o) noexcept;
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
  // The start of the line of the symbol at or below `ip` (of several at one
  // address the last listed); npos if `ip` is below every symbol.
  size_t LineAt(uint64_t ip) const;
  friend class SyntheticKernelAddresses;

  // The lines: read from /proc/kallsyms into `owned_`, or the cache file
  // mapped (a run needs a few of its lines: no copy, no index;
  // LinesFor searches the bytes).
  std::string owned_;
  std::shared_ptr<const void> mapping_;
  std::string_view text_;
  bool readable_ = false, hidden_ = false, from_cache_ = false;
};

// Whether the user syspgo acts for could read kernel addresses themselves:
// root, or not under sudo, or kernel.kptr_restrict 0 with
// kernel.perf_event_paranoid at most 1 (the kernel's kallsyms_show_value:
// with kptr_restrict 1 only CAP_SYSLOG sees them, with 2 no one, and a sudo
// user has no CAP_SYSLOG). False when the invoking user cannot be told.
bool InvokingUserSeesKernelAddresses();

// Kernel addresses for a user who may not see them (sudo, kptr_restrict):
// each address becomes (synthetic base of its symbol) + (offset in the
// symbol), so the kernel's layout (KASLR's offset, module addresses) stays
// hidden while every reader that names a frame from kallsyms lines keeps
// working unchanged. A symbol's base is a slot of 2^kSlotBits bytes in a fixed
// range below the kernel's own addresses (outside every real kallsyms
// range), chosen by a hash of the symbol's name and module: the same
// symbol gets the same base in every run (runs merge), and the order of
// bases says nothing of the real order. An address of no symbol, or
// further than a slot into its symbol, becomes the start of kUnknown.
class SyntheticKernelAddresses {
 public:
  static constexpr uint64_t kBase = 0xffff900000000000ull;
  static constexpr unsigned kSlotBits = 20;  // 1 MiB: more than any kernel function
  static constexpr uint64_t kSlots = uint64_t{1} << 24;
  static constexpr const char* kUnknown = "[unknown]";
  // The first line of Text(): says the addresses are synthetic. Its type
  // 'a' (absolute) is not a code symbol, so symbolizers skip it.
  static constexpr const char* kMarker = "0000000000000000 a syspgo_synthetic_kernel_addresses\n";

  // Reads the kernel's symbols (KernelSymbols::Load) on the first Map().
  SyntheticKernelAddresses() = default;

  // The synthetic address for a kernel address (upper half); anything else
  // is returned as it is (user addresses, 0).
  uint64_t Map(uint64_t addr);
  // kallsyms lines of the symbols Map() handed out, at their synthetic
  // bases, in address order, after kMarker.
  std::string Text() const;
  static bool IsSynthetic(uint64_t addr) { return addr >= kBase && addr < kBase + (kSlots << kSlotBits); }

 private:
  // The base of the symbol named by `key` ("T name[\tmodule]").
  uint64_t BaseOf(const std::string& key);

  KernelSymbols symbols_;
  bool loaded_ = false;
  std::unordered_map<uint64_t, uint64_t> mapped_;       // real address -> synthetic
  std::unordered_map<std::string, uint64_t> base_of_;  // symbol key -> base
  std::unordered_map<uint64_t, std::string> key_of_;   // slot -> symbol key
};

}  // namespace syspgo
