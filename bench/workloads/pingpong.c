// pingpong.c - two processes passing one byte back and forth through two
// pipes, N round trips: each is two wakeups and two context switches, the
// events the sched probe group records (bench/overhead.py --group sched).
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  int ping[2], pong[2];
  if (pipe(ping) || pipe(pong)) return perror("pipe"), 1;
  pid_t child = fork();
  if (child < 0) return perror("fork"), 1;
  char c = 0;
  if (child == 0) {
    for (long i = 0; i < n; ++i)
      if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) _exit(1);
    _exit(0);
  }
  for (long i = 0; i < n; ++i)
    if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) return perror("pingpong"), 1;
  int status;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
