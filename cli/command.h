//===- command.h - how subcommands register with the syspgo CLI ----------===//
// Each cli/cmd_<name>.cc defines one subcommand and registers it with a
// static Command object; main.cc dispatches on the first argument. A
// command parses its options and calls into collect/, analyze/ or
// optimize/: logic a test would want lives there, not here.
#pragma once
#include <string>
#include <vector>

namespace syspgo::cli {

using CommandFn = int (*)(const std::vector<std::string>& args);  // args after the subcommand

struct Command {
  Command(const char* name, const char* summary, CommandFn fn);
  const char* name;
  const char* summary;
  CommandFn fn;
};

const std::vector<const Command*>& Commands();

// Prints "syspgo: <msg>" to stderr; returns the exit status for usage errors (2).
int UsageError(const std::string& msg);
// Prints "syspgo: <msg>" to stderr; returns 1.
int Fail(const std::string& msg);

}  // namespace syspgo::cli
