//===- pagecache_thrash.cc - code pages evicted and re-read on every pass ---===//
// The page-cache thrash story as a program: a service that maps a large library and
// executes code spread over all of it. Alone it is fast: after the first
// pass every page is resident and mapped. Inside a memory cgroup whose limit
// is below the library's size, memcg reclaim keeps evicting the mapped pages,
// and every pass faults them back in from disk: the same program is many
// times slower and nothing in its own code says why. That churn (pages
// deleted by memcg reclaim, then added again) is what `syspgo analyze run.db
// pagecache` must find, naming the file, the cgroup and a limit that fixes it.
//
// The library is generated (--generate): its bytes need not be an ELF, only
// a disk-backed file mapped PROT_READ|PROT_EXEC like one, so the kernel
// treats its pages as executable file pages (which reclaim protects a little
// more than data, and still evicts under a hard limit). Pages are touched in
// one fixed pseudo-random order, the same every pass, as a hot loop that
// calls functions all over a big binary would.
//
// The file is mapped in 64 KiB segments with a hole between each, not as one
// mapping. A fault in an executable mapping reads ahead the device's
// read_ahead_kb (8 MiB on this VM's disk) from the faulting page to the end
// of the mapping, and ignores MADV_RANDOM and POSIX_FADV_RANDOM (measured on
// 6.18). In one 96 MiB mapping under a 32 MiB limit nearly every fault then
// re-reads megabytes that reclaim throws away again: 100 GiB read and about
// 4 minutes per pass. That is the same failure, worse, and useless as a test;
// segments bound each fault's read to 64 KiB. `--segment-kb 0` shows it.
//===----------------------------------------------------------------------===//
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "example_cli.h"

namespace {

using example::Die;
using example::Fail;
using example::ParseCount;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string file;
  bool generate = false;
  long mb = 64;     // size of the generated library in MiB
  long passes = 3;  // passes over every page
  bool mb_given = false;
  long segment_kb = 64;  // bytes per executable mapping; 0 maps the file whole
};

void Usage(FILE* out) {
  fprintf(out,
          "usage: pagecache_thrash --file PATH [--passes N] [--segment-kb N]\n"
          "       pagecache_thrash --file PATH --generate [--mb N]\n"
          "Maps PATH with PROT_READ|PROT_EXEC and touches every page in a fixed\n"
          "pseudo-random order, PASSES times, printing the time of each pass.\n"
          "\n"
          "  --file PATH     the library-like file (on a disk, not tmpfs)\n"
          "  --generate      create PATH with --mb MiB of bytes, fsync it, and exit;\n"
          "                  do it outside the memory cgroup under test, then drop\n"
          "                  the page cache, or the pages stay charged to you\n"
          "  --mb N          size to generate in MiB         (default 64, 1..65536)\n"
          "  --passes N      passes over the file            (default 3, 1..10000)\n"
          "  --segment-kb N  map the file in N KiB pieces    (default 64, 0..1048576),\n"
          "                  which bounds the read-ahead of one fault to N KiB;\n"
          "                  0 maps it whole: in a too-small cgroup each fault then\n"
          "                  re-reads up to read_ahead_kb, and a pass takes minutes\n"
          "\n"
          "run_in_memcg.sh beside this program's source does all of that for you:\n"
          "  run_in_memcg.sh --bin PATH/TO/pagecache_thrash --limit-mb 16 --mb 64\n");
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  example::ForEachArg(argc, argv, Usage, {"--generate"}, [&](std::string_view name, std::string_view value) {
    if (name.empty()) {
      Die("unexpected argument '%.*s'", static_cast<int>(value.size()), value.data());
    } else if (name == "--generate") {
      o.generate = true;
    } else if (name == "--file") {
      o.file = value;
    } else if (name == "--mb") {
      o.mb = ParseCount(name, value, 1, 65536);
      o.mb_given = true;
    } else if (name == "--passes") {
      o.passes = ParseCount(name, value, 1, 10000);
    } else if (name == "--segment-kb") {
      o.segment_kb = ParseCount(name, value, 0, 1 << 20);
    } else {
      Die("unknown option '%.*s'", static_cast<int>(name.size()), name.data());
    }
  });
  if (o.file.empty()) Die("no --file given");
  if (o.mb_given && !o.generate) Die("--mb sizes a --generate; a run maps the whole file as it is");
  return o;
}

uint64_t XorShift(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

// Page cache on tmpfs (or ramfs) is the file itself: it cannot be evicted and
// re-read, so the scenario would silently show nothing.
void RequireDiskBacked(int fd, const std::string& path, bool remove_on_failure) {
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0) Fail("cannot statfs %s: %s", path.c_str(), strerror(errno));
  if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC) {
    if (remove_on_failure) unlink(path.c_str());
    Fail("%s is on tmpfs/ramfs, where pages are never evicted and re-read; put it on a disk (e.g. /var/tmp)",
         path.c_str());
  }
}

void Generate(const Options& o) {
  int fd = open(o.file.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) Fail("cannot create %s: %s", o.file.c_str(), strerror(errno));
  RequireDiskBacked(fd, o.file, /*remove_on_failure=*/true);
  // Varied bytes, so that no filesystem can store the file as holes or
  // compress it away: each page really is read from the disk.
  std::vector<uint64_t> chunk((1 << 20) / sizeof(uint64_t));
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (long m = 0; m < o.mb; ++m) {
    for (auto& w : chunk) w = XorShift(seed);
    const char* p = reinterpret_cast<const char*>(chunk.data());
    size_t left = chunk.size() * sizeof(uint64_t);
    while (left > 0) {
      ssize_t n = write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Fail("write to %s failed: %s", o.file.c_str(), strerror(errno));
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  if (fsync(fd) != 0) Fail("fsync of %s failed: %s", o.file.c_str(), strerror(errno));
  close(fd);
  printf("pagecache_thrash: generated %s, %ld MiB\n", o.file.c_str(), o.mb);
}

// Bytes this process caused to be read from storage, readahead included: the
// cost of the refaults, which major-fault counts alone understate.
long long StorageReadBytes() {
  FILE* f = fopen("/proc/self/io", "r");
  if (!f) return -1;
  char line[128];
  long long v = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "read_bytes: %lld", &v) == 1) break;
  fclose(f);
  return v;
}

long MajorFaults() {
  rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_majflt;
}

constexpr uint32_t kFunctionBytes = 1024;  // "code" run per page visited

// Where the file's pages are: segment i (seg_pages pages) starts at
// base + i * stride, the stride leaving a hole that keeps the kernel from
// merging neighbouring segments into one mapping.
struct Layout {
  unsigned char* base = nullptr;
  size_t reserved = 0;   // bytes of address space, holes included
  size_t seg_pages = 0;  // file pages per segment
  size_t stride = 0;     // bytes from one segment's start to the next
  long page = 0;
  const unsigned char* Page(size_t p) const { return base + (p / seg_pages) * stride + (p % seg_pages) * page; }
};

Layout MapFile(int fd, const std::string& path, size_t pages, long page, long segment_kb) {
  Layout l;
  l.page = page;
  l.seg_pages = segment_kb == 0 ? pages : std::max<size_t>(1, static_cast<size_t>(segment_kb) * 1024 / page);
  l.seg_pages = std::min(l.seg_pages, pages);
  size_t segments = (pages + l.seg_pages - 1) / l.seg_pages;
  l.stride = (l.seg_pages + 1) * page;
  l.reserved = segments * l.stride;
  // Reserve the whole range first so the segments land in order, each with
  // an inaccessible anonymous page after it.
  void* r = mmap(nullptr, l.reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) Fail("cannot reserve %zu MiB of address space: %s", l.reserved >> 20, strerror(errno));
  l.base = static_cast<unsigned char*>(r);
  for (size_t i = 0; i < segments; ++i) {
    size_t first = i * l.seg_pages, n = std::min(l.seg_pages, pages - first);
    void* m = mmap(l.base + i * l.stride, n * page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd,
                   static_cast<off_t>(first * page));
    if (m == MAP_FAILED)
      Fail("cannot map %s with PROT_EXEC: %s%s", path.c_str(), strerror(errno),
           errno == EPERM   ? " (is its filesystem mounted noexec? use another directory)"
           : errno == ENOMEM ? " (too many mappings for vm.max_map_count? raise --segment-kb)"
                             : "");
  }
  return l;
}

// One pass of "execution": a 1 KiB function read from every page, in the
// fixed order. The reads give a resident pass real work to do (a few ms for
// 100 MiB), so the slow/fast ratio compares refaults with execution rather
// than with nothing. Out of line so the profile's stacks name it.
__attribute__((noinline)) uint64_t RunPass(const Layout& l, const std::vector<uint32_t>& order) {
  uint64_t sum = 0;
  uint32_t slots = static_cast<uint32_t>(l.page) / kFunctionBytes;
  for (uint32_t p : order) {
    // A page-dependent function within the page, as call targets would be.
    const unsigned char* fn = l.Page(p) + (p % slots) * kFunctionBytes;
    for (uint32_t off = 0; off < kFunctionBytes; off += sizeof(uint64_t)) {
      uint64_t w;
      memcpy(&w, fn + off, sizeof w);
      sum = sum * 31 + w;
    }
  }
  return sum;
}

int Run(const Options& o) {
  int fd = open(o.file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    Fail("cannot open %s: %s; create it first with `pagecache_thrash --file %s --generate --mb N`",
         o.file.c_str(), strerror(errno), o.file.c_str());
  RequireDiskBacked(fd, o.file, /*remove_on_failure=*/false);
  struct stat sb {};
  if (fstat(fd, &sb) != 0) Fail("cannot stat %s: %s", o.file.c_str(), strerror(errno));
  long page = sysconf(_SC_PAGESIZE);
  size_t pages = static_cast<size_t>(sb.st_size) / page;
  if (pages == 0) Fail("%s is smaller than a page; generate it with --generate --mb N", o.file.c_str());
  Layout layout = MapFile(fd, o.file, pages, page, o.segment_kb);
  close(fd);  // the mappings keep the file open

  // Fisher-Yates with a fixed seed: the same "call order" on every pass and
  // every run, so runs under different limits are comparable.
  std::vector<uint32_t> order(pages);
  for (size_t i = 0; i < pages; ++i) order[i] = static_cast<uint32_t>(i);
  uint64_t seed = 0x2545f4914f6cdd1dull;
  for (size_t i = pages - 1; i > 0; --i) std::swap(order[i], order[XorShift(seed) % (i + 1)]);

  printf("pagecache_thrash: %s, %zu MiB mapped PROT_EXEC in %zu KiB segments (%zu pages), %ld passes\n",
         o.file.c_str(), (pages * page) >> 20, layout.seg_pages * page / 1024, pages, o.passes);
  fflush(stdout);
  uint64_t checksum = 0;
  double first_ms = 0, later_ms = 0;
  for (long pass = 1; pass <= o.passes; ++pass) {
    long faults0 = MajorFaults();
    long long read0 = StorageReadBytes();
    auto t0 = Clock::now();
    checksum += RunPass(layout, order);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    long long read = read0 < 0 ? -1 : StorageReadBytes() - read0;
    printf("pass %ld/%ld: %.1f ms, %ld major faults, %.1f MiB read from storage\n", pass, o.passes, ms,
           MajorFaults() - faults0, read < 0 ? -1.0 : read / 1048576.0);
    fflush(stdout);
    (pass == 1 ? first_ms : later_ms) += ms;
  }
  munmap(layout.base, layout.reserved);
  // The first pass reads the file cold under any limit; the later passes are
  // the comparison that matters: all hits when the file fits, all refaults
  // when it does not.
  if (o.passes > 1)
    printf("pagecache_thrash: first pass %.1f ms, later passes %.1f ms mean (checksum %016llx)\n", first_ms,
           later_ms / (o.passes - 1), static_cast<unsigned long long>(checksum));
  else
    printf("pagecache_thrash: first pass %.1f ms (checksum %016llx)\n", first_ms,
           static_cast<unsigned long long>(checksum));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseOptions(argc, argv);
  if (o.generate) {
    Generate(o);
    return 0;
  }
  return Run(o);
}
