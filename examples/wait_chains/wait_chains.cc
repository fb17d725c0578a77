//===- wait_chains.cc - stalls whose cause lies in another thread or process ===//
// Each mode makes one thread wait on another task whose own wait or work is
// the real cause, so that `syspgo analyze DB stalls` must follow the wakeup
// chain to find the root (analyze/critical_path.h):
//   rpc DIR         a client sends 10 requests over loopback TCP to a server
//                   thread that sleeps 80 ms before each reply: root, the
//                   server's sleep (a timer)
//   lock-sleep DIR  a thread holds a mutex across an 60 ms sleep while the
//                   main thread waits for it, 8 times: root, the holder's sleep
//   lock-fsync DIR  the same, the holder dirtying 64 MiB of a file, then
//                   fdatasync()ing it under the lock, 3 times: root, the disk
//   write-sleep DIR a writer thread, 5 times, dirties 48 MiB of a file and
//                   fdatasync()s it under a lock, then sleeps 50 ms: five
//                   I/O stalls, and the sleeps between them apart
//   pipeline DIR    three processes in a pipe line; the first reads 32 MiB
//                   from the disk (O_DIRECT) before each message: root, the
//                   disk, two processes up the line from the main one
//   pool DIR        6 CPU-bound worker threads on fewer CPUs for 2 s: root,
//                   the CPU (the other workers had it)
//   child-fault DIR a parent waits for a child that touches a 128 MiB file
//                   evicted from the page cache, through a mapping: root,
//                   the disk (page faults)
// DIR is a directory on a real disk; `wait_chains prepare DIR` writes the
// files the disk modes use (128 MiB each), so that their runs do nothing
// but the scenario.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

void Die(const char* what) {
  perror(what);
  exit(1);
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Overwrites the first `mib` MiB of the file behind `fd` in the page cache
// (written before by `prepare`, so no block is allocated or discarded):
// they are dirty until a sync writes them back.
void Dirty(int fd, size_t mib) {
  std::vector<char> buf(1 << 20, 'y');
  for (size_t i = 0; i < mib; ++i)
    if (pwrite(fd, buf.data(), buf.size(), static_cast<off_t>(i << 20)) != static_cast<ssize_t>(buf.size()))
      Die("pwrite");
}

// Reads straight from the disk (O_DIRECT) into a buffer allocated and
// touched once: the thread waits for the device and does little else.
class DirectReader {
 public:
  DirectReader(const std::string& path, size_t mib) : len_(mib << 20) {
    fd_ = open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd_ < 0 || posix_memalign(&buf_, 4096, len_) != 0) Die("open O_DIRECT (run prepare first)");
    memset(buf_, 0, len_);
  }
  void Read(size_t at_mib) {
    if (pread(fd_, buf_, len_, static_cast<off_t>(at_mib << 20)) != static_cast<ssize_t>(len_)) Die("pread");
  }

 private:
  size_t len_;
  int fd_ = -1;
  void* buf_ = nullptr;
};

// A file of `mib` MiB on disk and out of the page cache.
void WriteCold(const std::string& path, size_t mib) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Die("open");
  std::vector<char> buf(1 << 20, 'x');
  for (size_t i = 0; i < mib; ++i)
    if (write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) Die("write");
  if (fsync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) Die("evict");
  close(fd);
}

void Rpc() {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    Die("listen");
  std::thread server([&] {
    int c = accept(listener, nullptr, nullptr);
    char req[16];
    while (recv(c, req, sizeof req, 0) > 0) {
      SleepMs(80);  // the slow part of serving a request
      if (send(c, "reply", 5, 0) != 5) Die("send");
    }
    close(c);
  });
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) Die("connect");
  for (int i = 0; i < 10; ++i) {
    char reply[16];
    if (send(s, "request", 7, 0) != 7 || recv(s, reply, sizeof reply, 0) <= 0) Die("request");
  }
  close(s);
  server.join();
  close(listener);
}

// The holder does `before`, takes the lock, says so, then does `work`
// under it; the main thread then asks for the lock and waits.
void LockHeldAcross(int rounds, const std::function<void()>& before, const std::function<void()>& work) {
  std::mutex mu;
  for (int i = 0; i < rounds; ++i) {
    std::atomic<bool> held{false};
    std::thread holder([&] {
      before();
      std::lock_guard<std::mutex> lock(mu);
      held = true;
      work();
    });
    while (!held) std::this_thread::yield();
    { std::lock_guard<std::mutex> lock(mu); }
    holder.join();
  }
}

// Bursts of I/O with a deliberate sleep between them, on one thread.
void WriteSleep(const std::string& dir) {
  int fd = open((dir + "/locked.dat").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) Die("open locked.dat (run prepare first)");
  std::mutex mu;
  std::thread writer([&] {
    for (int i = 0; i < 5; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        Dirty(fd, 48);
        if (fdatasync(fd) != 0) Die("fdatasync");
      }
      SleepMs(50);
    }
  });
  writer.join();
  close(fd);
}

void Pipeline(const std::string& dir) {
  int a[2], b[2];
  if (pipe(a) != 0 || pipe(b) != 0) Die("pipe");
  pid_t first = fork();
  if (first == 0) {  // the producer: each message only after its data is on disk
    close(a[0]);
    close(b[0]);
    close(b[1]);
    DirectReader reader(dir + "/pipeline.dat", 32);
    for (size_t i = 0; i < 4; ++i) {
      reader.Read(i * 32);
      if (write(a[1], "m", 1) != 1) Die("write");
    }
    _exit(0);
  }
  pid_t middle = fork();
  if (middle == 0) {  // passes each message on
    close(a[1]);
    close(b[0]);
    char c;
    while (read(a[0], &c, 1) == 1)
      if (write(b[1], &c, 1) != 1) Die("write");
    _exit(0);
  }
  close(a[0]);
  close(a[1]);
  close(b[1]);
  char c;
  int got = 0;
  while (read(b[0], &c, 1) == 1) ++got;
  waitpid(first, nullptr, 0);
  waitpid(middle, nullptr, 0);
  if (got != 4) Die("pipeline lost messages");
}

void Pool() {
  std::vector<std::thread> workers;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::atomic<uint64_t> sink{0};
  for (int i = 0; i < 6; ++i)
    workers.emplace_back([&] {
      uint64_t x = 1;
      while (std::chrono::steady_clock::now() < until)
        for (int k = 0; k < 100000; ++k) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      sink += x;
    });
  for (auto& w : workers) w.join();
  printf("%llu\n", static_cast<unsigned long long>(sink.load() & 1));
}

void ChildFault(const std::string& dir) {
  std::string path = dir + "/mapped.dat";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) Die("open mapped.dat (run prepare first)");
  pid_t child = fork();
  if (child == 0) {
    size_t size = 128u << 20;
    auto* p = static_cast<volatile char*>(mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0));
    if (p == MAP_FAILED) Die("mmap");
    unsigned sum = 0;
    // One touch per 256 KiB: each fault waits for the read around it, and
    // the CPU has little else to do.
    for (size_t off = 0; off < size; off += 256 << 10) sum += p[off];
    _exit(sum == 0 ? 0 : 2);
  }
  int status = 0;
  waitpid(child, &status, 0);
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: wait_chains prepare|rpc|lock-sleep|lock-fsync|write-sleep|pipeline|pool|child-fault DIR\n");
    return 2;
  }
  std::string mode = argv[1], dir = argv[2];
  if (mode == "prepare") {
    for (const char* name : {"/locked.dat", "/pipeline.dat", "/mapped.dat"}) WriteCold(dir + name, 128);
  } else if (mode == "rpc") {
    Rpc();
  } else if (mode == "lock-sleep") {
    LockHeldAcross(8, [] {}, [] { SleepMs(60); });
  } else if (mode == "lock-fsync") {
    int fd = open((dir + "/locked.dat").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) Die("open locked.dat (run prepare first)");
    LockHeldAcross(3, [&] { Dirty(fd, 64); }, [&] {
      if (fdatasync(fd) != 0) Die("fdatasync");
    });
    close(fd);
  }
  else if (mode == "write-sleep") WriteSleep(dir);
  else if (mode == "pipeline") Pipeline(dir);
  else if (mode == "pool") Pool();
  else if (mode == "child-fault") ChildFault(dir);
  else {
    fprintf(stderr, "wait_chains: unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  return 0;
}
