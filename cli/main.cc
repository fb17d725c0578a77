//===- main.cc - the syspgo command: dispatch to a subcommand ------------===//
#include <cstdio>
#include <cstring>
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

static void Usage(FILE* f) {
  fprintf(f,
          "syspgo %s: whole-system profile-guided optimization on eBPF\n\n"
          "usage: syspgo COMMAND [OPTIONS] [ARGS]\n\ncommands:\n",
          SYSPGO_VERSION);
  for (auto* c : Commands()) fprintf(f, "  %-10s %s\n", c->name, c->summary);
  fprintf(f, "\n'syspgo COMMAND --help' describes each command.\n");
}

}  // namespace syspgo::cli

int main(int argc, char** argv) {
  using namespace syspgo::cli;
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    Usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("syspgo %s\n", SYSPGO_VERSION);
    return 0;
  }
  for (auto* c : Commands()) {
    if (!strcmp(c->name, argv[1])) return c->fn(std::vector<std::string>(argv + 2, argv + argc));
  }
  return UsageError(std::string("unknown command '") + argv[1] + "'; run 'syspgo --help' for the list");
}
