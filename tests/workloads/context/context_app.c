// One function, step(), called from two call sites whose calls take
// different paths through it: from mostly_even() nearly every call takes
// its first branch, from mostly_odd() its second. A flat profile averages
// the two; a profile keyed by calling context keeps them apart.
// OUT_OF_LINE keeps the functions apart in the profiled build, so that the
// stacks show who called whom; the rebuild defines it empty, so that clang
// may inline them as the profile says.
#include <stdio.h>
#include <stdlib.h>

#ifndef OUT_OF_LINE
#define OUT_OF_LINE __attribute__((noinline))
#endif

OUT_OF_LINE unsigned long step(unsigned long x, unsigned long i) {
  if ((i & 7) != 7) {
    x = x * 2862933555777941757ull + 3037000493ull;  // the even path
  } else {
    x ^= x >> 17;                                     // the odd path
    x *= 0xff51afd7ed558ccdull;
  }
  return x;
}

// Never called: a function without samples, whose probes must stay in its
// own code (the probe-keyed profile gives it none of step()'s samples).
OUT_OF_LINE unsigned long never_called(unsigned long x, long n) {
  for (long i = 0; i < n; ++i) x = x * 6364136223846793005ull + (unsigned long)i;
  return x;
}

OUT_OF_LINE unsigned long mostly_even(unsigned long x, long n) {
  for (long i = 0; i < n; ++i) x = step(x, (unsigned long)i * 8);
  return x;
}

OUT_OF_LINE unsigned long mostly_odd(unsigned long x, long n) {
  for (long i = 0; i < n; ++i) x = step(x, (unsigned long)i * 8 + 7);
  return x;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  unsigned long x = mostly_even(1, n);
  x = mostly_odd(x, n);
  printf("%lu\n", x);
  return 0;
}
