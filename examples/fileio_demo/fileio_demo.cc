//===- fileio_demo.cc - the bundled example of the README's first command ===//
// Writes a file in 1 MiB chunks, fsyncs it, reads it back, and removes it:
// the smallest program whose file I/O `syspgo analyze files` has something
// to say about (the fsync dominates the write side's latency).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "fileio_demo.dat";
  int mib = argc > 2 ? atoi(argv[2]) : 32;
  std::vector<char> buf(1 << 20, 'x');
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) {
    fprintf(stderr, "fileio_demo: cannot create %s: %s\n", path.c_str(), strerror(errno));
    return 1;
  }
  for (int i = 0; i < mib; ++i) {
    if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) {
      perror("fileio_demo: write");
      return 1;
    }
  }
  if (fsync(fd) != 0) perror("fileio_demo: fsync");
  close(fd);
  fd = open(path.c_str(), O_RDONLY);
  size_t total = 0;
  for (ssize_t n; (n = read(fd, buf.data(), buf.size())) > 0;) total += n;
  close(fd);
  unlink(path.c_str());
  printf("fileio_demo: wrote, fsynced and read back %zu MiB of %s\n", total >> 20, path.c_str());
  return 0;
}
