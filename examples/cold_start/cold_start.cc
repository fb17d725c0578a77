//===- cold_start.cc - story 2: a start that pages large files in at random ===//
// Stands for a program whose start maps a large shared library and an
// image and touches scattered pages of both, the way code and assets are
// used at start: every first touch of a page is a page fault, and from a
// cold cache each fault is a small read at a random place (plus whatever
// readahead the device adds around it).
//
//   cold_start DIR --make   writes DIR/libbig.so.data (96 MiB) and
//                           DIR/image.data (32 MiB) of pseudo-random bytes
//   cold_start DIR          maps both, touches 2400 + 600 pages in a fixed
//                           pseudo-random order, prints a checksum and the
//                           time it took
//
// The pages and their order are the same every run, so a plan recorded from
// one cold run (syspgo collect --cold --no-readahead, syspgo optimize --emit
// plan) covers the next: see README.md.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kPage = 4096;
struct Data {
  const char* name;
  uint64_t bytes;
  uint32_t touches;
};
constexpr Data kFiles[] = {{"libbig.so.data", 96ull << 20, 2400}, {"image.data", 32ull << 20, 600}};

int Usage() {
  fprintf(stderr, "usage: cold_start DIR [--make]\n");
  return 2;
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int Make(const std::string& dir) {
  std::vector<uint64_t> block(1 << 17);  // 1 MiB
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (const Data& d : kFiles) {
    std::string path = dir + "/" + d.name;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      fprintf(stderr, "cold_start: cannot create %s: %s\n", path.c_str(), strerror(errno));
      return 1;
    }
    for (uint64_t done = 0; done < d.bytes; done += block.size() * 8) {
      for (auto& w : block) w = (x = x * 6364136223846793005ull + 1442695040888963407ull);
      if (write(fd, block.data(), block.size() * 8) != static_cast<ssize_t>(block.size() * 8)) {
        fprintf(stderr, "cold_start: cannot write %s: %s\n", path.c_str(), strerror(errno));
        close(fd);
        return 1;
      }
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
      fprintf(stderr, "cold_start: cannot write %s: %s\n", path.c_str(), strerror(errno));
      return 1;
    }
  }
  printf("cold_start: wrote %s/%s and %s/%s\n", dir.c_str(), kFiles[0].name, dir.c_str(), kFiles[1].name);
  return 0;
}

int Run(const std::string& dir) {
  double t0 = Now();
  uint64_t sum = 0, x = 12345;
  for (const Data& d : kFiles) {
    std::string path = dir + "/" + d.name;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != d.bytes) {
      fprintf(stderr, "cold_start: %s is missing or has the wrong size; run: cold_start %s --make\n", path.c_str(),
              dir.c_str());
      if (fd >= 0) close(fd);
      return 1;
    }
    auto* m = static_cast<const volatile unsigned char*>(mmap(nullptr, d.bytes, PROT_READ, MAP_PRIVATE, fd, 0));
    close(fd);
    if (m == MAP_FAILED) {
      fprintf(stderr, "cold_start: cannot map %s: %s\n", path.c_str(), strerror(errno));
      return 1;
    }
    uint64_t pages = d.bytes / kPage;
    for (uint32_t i = 0; i < d.touches; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      sum += m[(x >> 33) % pages * kPage + (x & 0xfff)];
    }
    munmap(const_cast<unsigned char*>(m), d.bytes);
  }
  printf("cold_start: checksum %" PRIu64 ", %.1f ms\n", sum, (Now() - t0) * 1e3);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && !strcmp(argv[2], "--make")) return Make(argv[1]);
  if (argc == 2 && argv[1][0] != '-') return Run(argv[1]);
  return Usage();
}
