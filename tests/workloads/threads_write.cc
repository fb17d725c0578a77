//===- threads_write.cc - threads of one process writing their own files -===//
// Checks that threads are followed as threads of one process: each of N
// threads names itself "writer-<i>" and writes <kib> KiB to <dir>/t<i>.
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  std::string dir = argv[1];
  int n = atoi(argv[2]), kib = atoi(argv[3]);
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i) {
    ts.emplace_back([&, i] {
      pthread_setname_np(pthread_self(), ("writer-" + std::to_string(i)).c_str());
      std::vector<char> buf(1024, 'a' + i);
      int fd = open((dir + "/t" + std::to_string(i)).c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
      for (int k = 0; k < kib; ++k)
        if (write(fd, buf.data(), buf.size()) != 1024) _exit(1);
      close(fd);
    });
  }
  for (auto& t : ts) t.join();
  return 0;
}
