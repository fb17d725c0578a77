//===- command.cc - the registry of subcommands, and their error helpers ===//
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"

namespace syspgo::cli {

static std::vector<const Command*>& Registry() {
  static std::vector<const Command*> r;
  return r;
}

Command::Command(const char* n, const char* s, CommandFn f) : name(n), summary(s), fn(f) {
  Registry().push_back(this);
}

const std::vector<const Command*>& Commands() { return Registry(); }

int UsageError(const std::string& msg) {
  fprintf(stderr, "syspgo: %s\n", msg.c_str());
  return 2;
}

int Fail(const std::string& msg) {
  fprintf(stderr, "syspgo: %s\n", msg.c_str());
  return 1;
}

}  // namespace syspgo::cli
