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

// What a command needs of root under sudo (common/identity.h). Most need
// nothing: the process becomes the invoking user before the command runs,
// so every file it opens or creates and every program it starts carries
// that user's rights by construction. A command that keeps root does so
// for one named purpose and acts as the user (ActAsUser, BecomeUserInChild)
// for everything it does on the user's behalf.
enum class Privilege {
  kUser,  // drop to the invoking user before anything runs
  kRoot,  // keep root: collect (BPF), prefetch (locking pages), pgo (its collections)
};

struct Command {
  Command(const char* name, const char* summary, CommandFn fn, Privilege privilege = Privilege::kUser);
  const char* name;
  const char* summary;
  CommandFn fn;
  Privilege privilege;
};

const std::vector<const Command*>& Commands();

// Runs `c` on `args` with the privilege it declares: the one way main()
// (and syspgo-prefetch's main) start a command.
int RunCommand(const Command& c, const std::vector<std::string>& args);

// Prints "syspgo: <msg>" to stderr (through TerminalSafeLines); returns the
// exit status for usage errors (2).
int UsageError(const std::string& msg);
// Prints "syspgo: <msg>" to stderr (through TerminalSafeLines); returns 1.
int Fail(const std::string& msg);
// Print "syspgo: warning: <msg>" and "syspgo: note: <msg>" to stderr
// (through TerminalSafeLines): they name files and commands from profiles
// and plans.
void Warn(const std::string& msg);
void Note(const std::string& msg);

}  // namespace syspgo::cli
