/* pgo_cmake mix.c - the static library of the SysPGO.cmake test project. */
unsigned long mix(unsigned long x, long n) {
  for (long i = 0; i < n; ++i) x = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9ul + (unsigned long)i;
  return x;
}
