//===- wait_kinds.cc - threads that wait without I/O, beside one that syncs -===//
// The workload of diagnose_test's "not blamed on I/O" scenario. While one
// thread ("syncer") writes 64 MiB to DIR/wait_kinds.dat and fsyncs it, so
// the disk is busy, three others wait about 300 ms each in ways that have
// nothing to do with it: "sleeper" in nanosleep, "pipe-reader" in read()
// of a pipe the main thread writes to at the end, "locker" on a mutex the
// main thread holds meanwhile (a futex). The stalls analysis must name each
// for what it is and attribute block I/O to the syncer only.
//
// usage: wait_kinds DIR
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kWaitMs = 300;
constexpr size_t kSyncBytes = 64u << 20;  // enough that its fsync waits well over 10 ms

std::mutex g_lock;
int g_pipe[2];

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, nullptr);
}

void Name(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: wait_kinds DIR\n");
    return 2;
  }
  std::string path = std::string(argv[1]) + "/wait_kinds.dat";
  if (pipe(g_pipe) != 0) return 1;
  g_lock.lock();
  std::vector<std::thread> threads;
  threads.emplace_back([] {
    Name("sleeper");
    SleepMs(kWaitMs);
  });
  threads.emplace_back([] {
    Name("pipe-reader");
    char c;
    if (read(g_pipe[0], &c, 1) != 1) _exit(3);
  });
  threads.emplace_back([] {
    Name("locker");
    std::lock_guard<std::mutex> hold(g_lock);
  });
  threads.emplace_back([&path] {
    Name("syncer");
    std::vector<char> buf(1 << 20, 'x');
    int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) _exit(4);
    for (size_t done = 0; done < kSyncBytes; done += buf.size())
      if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) _exit(5);
    if (fsync(fd) != 0) _exit(6);
    close(fd);
  });
  SleepMs(kWaitMs);
  if (write(g_pipe[1], "x", 1) != 1) return 7;
  g_lock.unlock();
  for (std::thread& t : threads) t.join();
  unlink(path.c_str());
  puts("wait_kinds: done");
  return 0;
}
