// getppid.c - a syscall flood with no file I/O: N getppid calls (argv[1]).
// bench/tax.py's untraced non-file load, a syscall no analysis reads.
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  for (long i = 0; i < n; i++) syscall(SYS_getppid);  // not libc's getppid: no caching, one syscall each
  return 0;
}
