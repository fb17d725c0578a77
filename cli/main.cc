//===- main.cc - the syspgo command: dispatch to a subcommand ------------===//
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/completion.h"

namespace syspgo::cli {

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
  // Not in the usage: the build writes the bash completion with it (cli/completion.h).
  if (!strcmp(argv[1], "--completion")) return PrintCompletion(argc > 2 ? argv[2] : "", stdout);
  for (auto* c : Commands()) {
    if (!strcmp(c->name, argv[1])) return RunCommand(*c, std::vector<std::string>(argv + 2, argv + argc));
  }
  return UsageError(std::string("unknown command '") + argv[1] + "'; run 'syspgo --help' for the list");
}
