//===- pipe_wait.cc - a thread blocked on an empty pipe, woken by another -===//
// The sched test's workload. A reader thread blocks in read() on an empty
// pipe; a writer thread waits until the kernel reports the reader asleep,
// sleeps `ms` (argv[1], default 200), and writes one byte. So the reader is
// off the CPU, in pipe_read, for at least that long, and the writer is what
// wakes it. Prints "reader=TID writer=TID" for the test.
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

int g_pipe[2];
std::atomic<pid_t> g_reader_tid{0};
pid_t g_writer_tid = 0;
long g_ms = 200;

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// The state letter in /proc/self/task/TID/stat ('S' once it sleeps).
char ThreadState(pid_t tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t rp = s.rfind(')');
  return rp != std::string::npos && rp + 2 < s.size() ? s[rp + 2] : '?';
}

__attribute__((noinline)) void* Reader(void*) {
  pthread_setname_np(pthread_self(), "pipe-reader");
  g_reader_tid = Tid();
  char c;
  if (read(g_pipe[0], &c, 1) != 1) exit(3);
  return nullptr;
}

__attribute__((noinline)) void* Writer(void*) {
  pthread_setname_np(pthread_self(), "pipe-writer");
  g_writer_tid = Tid();
  while (g_reader_tid == 0 || ThreadState(g_reader_tid) != 'S') usleep(1000);
  timespec ts{g_ms / 1000, (g_ms % 1000) * 1000000};
  nanosleep(&ts, nullptr);
  if (write(g_pipe[1], "x", 1) != 1) exit(4);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_ms = atol(argv[1]);
  if (pipe(g_pipe) != 0) return 2;
  pthread_t r, w;
  pthread_create(&r, nullptr, Reader, nullptr);
  pthread_create(&w, nullptr, Writer, nullptr);
  pthread_join(r, nullptr);
  pthread_join(w, nullptr);
  printf("reader=%d writer=%d\n", static_cast<int>(g_reader_tid), static_cast<int>(g_writer_tid));
  return 0;
}
