//===- kallsyms.cc - the kernel's code symbols, read once per boot --------===//
#include "collect/kallsyms.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "common/files.h"
#include "common/identity.h"
#include "common/profile_db.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr const char* kCacheName = "kallsyms";
constexpr const char* kMagic = "syspgo kallsyms cache 1";

// What the cache must have been made under: this boot (the kernel's own
// symbols move only with KASLR at boot) and these modules, each by name,
// size and load address (not by /proc/modules's whole text: its use
// counts change all the time).
std::string CacheKey() {
  std::string modules;
  std::istringstream in(ReadFileOrEmpty("/proc/modules"));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = Split(line, ' ');
    if (f.size() < 6) continue;
    modules += f[0] + " " + f[1] + " " + f[5] + "\n";
  }
  return std::string(kMagic) + " boot=" + CurrentBootId() + " modules=" + ContentHash(modules) + "\n";
}

// A line of /proc/kallsyms kept: a code symbol (t, T, w, W), not of a BPF
// program or the kernel's dynamic code ([bpf], [__builtin__ftrace],
// [__builtin__kprobes]...). Its address in *addr (0 when hidden).
bool KeepLine(std::string_view line, uint64_t* addr) {
  if (line.ends_with("\t[bpf]") || line.find("\t[__builtin__") != std::string_view::npos) return false;
  // "ffffffff81000000 T name[\tmodule]": 16 hex digits on 64-bit kernels.
  size_t sp = line.find(' ');
  if (sp == 0 || sp == std::string_view::npos || sp + 2 >= line.size() || line[sp + 2] != ' ') return false;
  if (std::string_view("tTwW").find(line[sp + 1]) == std::string_view::npos) return false;
  char* end = nullptr;
  *addr = strtoull(line.data(), &end, 16);
  return end == line.data() + sp;
}

// The cache directory if it is root's and no one else can write it (made
// if missing); "" otherwise: then nothing is cached.
std::string OwnDir(const std::string& dir) {
  if (geteuid() != 0) return "";
  mkdir(dir.c_str(), 0700);  // EEXIST is fine: checked below
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) return "";
  return dir;
}

// The cache mapped, if it is root's own regular file and begins with `key`.
std::shared_ptr<const void> MapCache(const std::string& path, const std::string& key, std::string_view* text) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  void* p = MAP_FAILED;
  size_t len = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 022) &&
      st.st_size > static_cast<off_t>(key.size())) {
    len = static_cast<size_t>(st.st_size);
    p = mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  close(fd);
  if (p == MAP_FAILED) return nullptr;
  std::shared_ptr<const void> mapping(p, [len](const void* m) { munmap(const_cast<void*>(m), len); });
  std::string_view data(static_cast<const char*>(p), len);
  if (!data.starts_with(key) || !data.ends_with('\n')) return nullptr;
  *text = data.substr(key.size());
  return mapping;
}

}  // namespace

KernelSymbols KernelSymbols::Load(const std::string& cache_dir) {
  KernelSymbols s;
  std::string dir = OwnDir(cache_dir), key = CacheKey();
  std::string path = dir.empty() ? "" : dir + "/" + kCacheName;
  if (!path.empty() && (s.mapping_ = MapCache(path, key, &s.text_))) {
    s.readable_ = s.from_cache_ = true;
    return s;
  }
  // One buffer, lines kept as (address, offset, length): a small string
  // per line would cost more than the reading.
  std::string all = ReadFileOrEmpty("/proc/kallsyms");
  struct Line {
    uint64_t addr;
    size_t at, len;
  };
  std::vector<Line> lines;
  bool any = false, hidden = true;
  for (size_t at = 0, next = 0; at < all.size(); at = next) {
    size_t nl = all.find('\n', at);
    next = nl == std::string::npos ? all.size() : nl + 1;
    std::string_view line(all.data() + at, (nl == std::string::npos ? all.size() : nl) - at);
    uint64_t addr = 0;
    if (!KeepLine(line, &addr)) continue;
    any = true;
    hidden = hidden && addr == 0;
    if (addr != 0) lines.push_back({addr, at, line.size()});
  }
  s.readable_ = any;
  s.hidden_ = any && hidden;
  if (!any || s.hidden_) return s;
  // Stable: of symbols at one address the last listed stays last, the one
  // LinesFor names, as the symbolizer's stable sort does.
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.addr < b.addr; });
  s.owned_.reserve(all.size());
  for (const Line& l : lines) {
    s.owned_.append(all, l.at, l.len);
    s.owned_ += '\n';
  }
  s.text_ = s.owned_;
  // Best effort: without the cache the next run reads /proc/kallsyms too.
  if (!path.empty()) (void)WriteOwnFileAtomically(path, key + s.owned_, 0600);
  return s;
}

size_t KernelSymbols::NextLine(size_t at) const {
  size_t nl = text_.find('\n', at);
  return nl == std::string_view::npos ? text_.size() : nl + 1;
}

KernelSymbols& KernelSymbols::operator=(KernelSymbols&& o) noexcept {
  bool own = !o.owned_.empty() && o.text_.data() == o.owned_.data();
  owned_ = std::move(o.owned_);
  mapping_ = std::move(o.mapping_);
  text_ = own ? std::string_view(owned_) : o.text_;
  readable_ = o.readable_;
  hidden_ = o.hidden_;
  from_cache_ = o.from_cache_;
  o.text_ = {};
  return *this;
}

size_t KernelSymbols::LineAt(uint64_t ip) const {
  // Bisect the bytes: [lo, hi) holds the line starts still in question,
  // `best` is the last line seen at or below ip. Every line ends in '\n'.
  size_t lo = 0, hi = text_.size(), best = std::string_view::npos;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    size_t start = text_.rfind('\n', mid == 0 ? 0 : mid - 1);
    start = start == std::string_view::npos || start < lo ? lo : start + 1;
    if (strtoull(text_.data() + start, nullptr, 16) <= ip) {
      best = start;
      lo = NextLine(start);
    } else {
      hi = start;
    }
  }
  return best;
}

std::string KernelSymbols::LinesFor(const std::vector<uint64_t>& sorted_ips) const {
  std::string out;
  size_t last = std::string_view::npos;  // the line named last
  for (uint64_t ip : sorted_ips) {
    size_t best = LineAt(ip);
    if (best == std::string_view::npos || best == last) continue;
    last = best;
    out.append(text_.substr(best, NextLine(best) - best));
  }
  return out;
}

namespace {

// A sysctl's value; `fallback` if it cannot be read.
long SysctlOr(const char* path, long fallback) {
  std::string v = ReadFileOrEmpty(path);
  char* end = nullptr;
  long n = strtol(v.c_str(), &end, 10);
  return end == v.c_str() ? fallback : n;
}

}  // namespace

bool InvokingUserSeesKernelAddresses() {
  const auto& user = InvokingUser();
  if (!user.ok()) return false;
  if (!user.value()) return true;  // root, or not under sudo
  // Unreadable sysctls count as the strictest setting.
  return SysctlOr("/proc/sys/kernel/kptr_restrict", 2) == 0 &&
         SysctlOr("/proc/sys/kernel/perf_event_paranoid", 2) <= 1;
}

uint64_t SyntheticKernelAddresses::BaseOf(const std::string& key) {
  auto it = base_of_.find(key);
  if (it != base_of_.end()) return it->second;
  // FNV-1a of the key picks the slot; taken slots are passed over.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
  uint64_t slot = h % kSlots;
  while (key_of_.count(slot)) slot = (slot + 1) % kSlots;
  key_of_.emplace(slot, key);
  uint64_t base = kBase + (slot << kSlotBits);
  base_of_.emplace(key, base);
  return base;
}

uint64_t SyntheticKernelAddresses::Map(uint64_t addr) {
  if (!(addr >> 63)) return addr;
  auto it = mapped_.find(addr);
  if (it != mapped_.end()) return it->second;
  if (!loaded_) {
    symbols_ = KernelSymbols::Load();
    loaded_ = true;
  }
  // "ffffffff81000000 T name[\tmodule]": the key is what follows the address.
  uint64_t out = 0;
  size_t at = symbols_.hidden() ? std::string_view::npos : symbols_.LineAt(addr);
  if (at != std::string_view::npos) {
    std::string_view line = symbols_.text_.substr(at, symbols_.NextLine(at) - at - 1);
    uint64_t start = strtoull(line.data(), nullptr, 16), off = addr - start;
    size_t sp = line.find(' ');
    if (off < (uint64_t{1} << kSlotBits) && sp != std::string_view::npos)
      out = BaseOf(std::string(line.substr(sp + 1))) + off;
  }
  if (!out) out = BaseOf(std::string("t ") + kUnknown);
  mapped_.emplace(addr, out);
  return out;
}

std::string SyntheticKernelAddresses::Text() const {
  std::map<uint64_t, const std::string*> sorted;
  for (auto& [key, base] : base_of_) sorted.emplace(base, &key);
  std::string out = kMarker;
  char addr[24];
  for (auto& [base, key] : sorted) {
    snprintf(addr, sizeof addr, "%016" PRIx64 " ", base);
    out += addr + *key + "\n";
  }
  return out;
}

}  // namespace syspgo
