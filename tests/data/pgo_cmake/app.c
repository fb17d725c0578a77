/* pgo_cmake app.c - the executable of the SysPGO.cmake test project: calls
   a hot function in a static library and prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

unsigned long mix(unsigned long x, long n);

int main(int argc, char** argv) {
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
  printf("%lu\n", mix(7, n));
  return 0;
}
