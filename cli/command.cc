//===- command.cc - the registry of subcommands, and their error helpers ===//
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "common/identity.h"
#include "common/util.h"

namespace syspgo::cli {

static std::vector<const Command*>& Registry() {
  static std::vector<const Command*> r;
  return r;
}

Command::Command(const char* n, const char* s, CommandFn f, Privilege p) : name(n), summary(s), fn(f), privilege(p) {
  Registry().push_back(this);
}

const std::vector<const Command*>& Commands() { return Registry(); }

int RunCommand(const Command& c, const std::vector<std::string>& args) {
  if (c.privilege == Privilege::kUser) {
    if (Status st = DropToInvokingUser(); !st.ok()) return Fail(st.error().message);
  } else if (auto user = InvokingUserOrNull(); !user.ok()) {
    return Fail(user.error().message);  // a tampered SUDO_UID/SUDO_GID: act for nobody
  }
  return c.fn(args);
}

// Messages quote paths and commands from profiles and plans, which may hold
// terminal escapes: they reach the terminal only through TerminalSafeLines.
int UsageError(const std::string& msg) {
  fprintf(stderr, "syspgo: %s\n", TerminalSafeLines(msg).c_str());
  return 2;
}

int Fail(const std::string& msg) {
  fprintf(stderr, "syspgo: %s\n", TerminalSafeLines(msg).c_str());
  return 1;
}

void Warn(const std::string& msg) { fprintf(stderr, "syspgo: warning: %s\n", TerminalSafeLines(msg).c_str()); }

void Note(const std::string& msg) { fprintf(stderr, "syspgo: note: %s\n", TerminalSafeLines(msg).c_str()); }

}  // namespace syspgo::cli
