//===- example_cli.h - what the example scenarios share on the command line -===//
// Header-only, so each scenario stays one standalone program (no syspgo
// library): its options are whole numbers in a range, and it fails in one
// way. Bad usage exits 2 with a pointer to --help; a failure of the scenario
// itself (no file, no mapping) exits 1. Messages start with the program's
// name as it was run.
#pragma once
#include <errno.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
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

// Walks the arguments after the program's name, calling on(name, value)
// for each: `--name value` and `--name=value` alike, a name in `flags`
// with an empty value, and an argument not starting with "--" with an
// empty name. -h and --help may stand anywhere.
template <class On>
void ForEachArg(int argc, char** argv, void (*usage)(FILE*), std::initializer_list<std::string_view> flags, On on) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    HelpIfAsked(arg, usage);
    if (!arg.starts_with("--")) {
      on(std::string_view(), arg);
    } else if (auto eq = arg.find('='); eq != std::string_view::npos) {
      on(arg.substr(0, eq), arg.substr(eq + 1));
    } else if (std::find(flags.begin(), flags.end(), arg) != flags.end()) {
      on(arg, std::string_view());
    } else {
      if (i + 1 >= argc) Die("%s needs a value", argv[i]);
      on(arg, std::string_view(argv[++i]));
    }
  }
}

// The value of option `name`, a whole number from min to max; bad usage if not.
inline long ParseCount(std::string_view name, std::string_view value, long min, long max) {
  std::string text(value);
  char* end = nullptr;
  errno = 0;
  long v = strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v < min || v > max)
    Die("%.*s wants a whole number from %ld to %ld, not '%s'", static_cast<int>(name.size()), name.data(), min, max,
        text.c_str());
  return v;
}

}  // namespace example
