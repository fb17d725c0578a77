//===- example_cli.h - what the example scenarios share on the command line -===//
// Header-only, so each scenario stays one standalone program (no syspgo
// library): its options are whole numbers in a range, and it fails in one
// way. Bad usage exits 2 with a pointer to --help; a failure of the scenario
// itself (no file, no mapping) exits 1. Messages start with the program's
// name as it was run.
#pragma once
#include <errno.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace example {

// Neither returns, so the va_list is never ended.
[[noreturn]] inline void VExit(int status, const char* fmt, va_list ap) {
  fprintf(stderr, "%s: ", program_invocation_short_name);
  vfprintf(stderr, fmt, ap);
  if (status == 2)
    fprintf(stderr, "\nrun `%s --help` for the options\n", program_invocation_short_name);
  else
    fputs("\n", stderr);
  exit(status);
}

[[noreturn]] __attribute__((format(printf, 1, 2))) inline void Die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VExit(2, fmt, ap);
}

[[noreturn]] __attribute__((format(printf, 1, 2))) inline void Fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VExit(1, fmt, ap);
}

// -h and --help print the usage to stdout and exit 0 wherever they stand.
inline void HelpIfAsked(std::string_view arg, void (*usage)(FILE*)) {
  if (arg != "-h" && arg != "--help") return;
  usage(stdout);
  exit(0);
}

// The value of option `name`, a whole number from min to max; bad usage if not.
inline long ParseCount(const char* name, const char* text, long min, long max) {
  char* end = nullptr;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
    Die("%s wants a whole number from %ld to %ld, not '%s'", name, min, max, text);
  return v;
}

}  // namespace example
