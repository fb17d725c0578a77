//===- target.h - the process tree a collection follows ------------------===//
// Spawning the command held (stopped before exec until every probe is
// attached, so nothing early is missed) or finding a running process and
// its descendants for -p. All checks a user can get wrong happen here,
// before anything runs, with messages that name the input.
#pragma once
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/identity.h"
#include "common/process.h"
#include "common/result.h"

namespace syspgo {

// Finds argv0 like execvp would; the error says why it cannot run.
Result<std::string> ResolveCommand(const std::string& argv0);

// The command, forked and waiting before its exec (common/process.h):
// pid(), Release(), Reap(), Signaled().
class HeldChild : public ChildProcess {
 public:
  // Forks; the child waits until Release(), then execs `path` with argv,
  // with the default dispositions of the signals the collector handles and
  // none of the collector's ambient capabilities. With `as` set, the child
  // becomes that user before exec, with what `sudo -u` gives (groups, HOME,
  // USER, LOGNAME, SHELL; common/identity.h).
  static Result<std::unique_ptr<HeldChild>> Spawn(const std::string& path, const std::vector<std::string>& argv,
                                                  const User* as = nullptr);
};

// Checks that `pid` names a live process; the error says what to do.
Status CheckPid(pid_t pid);
// Under sudo, a user may record only processes they could trace themselves,
// by the rule ptrace(2) and perf use: every uid and gid of `pid` (real,
// effective, saved, filesystem) theirs, no permitted capabilities, and the
// process dumpable. A recording shows a process's files, syscalls, memory
// map and stacks, which the kernel hides from the user otherwise. The
// error is EPERM and says why, or ESRCH when the process is gone.
Status CheckMayAttach(pid_t pid, const User& user);
// Why `user` may not record process `pid` by that rule ("runs as uid 0,
// not as uid 1000 who ran sudo"), or "" when they may; ESRCH when it cannot
// be read (it exited).
Result<std::string> WhyNotTheUsers(pid_t pid, const User& user);
// pid and every process descended from it, parents first; the first's
// parent is given as 0.
struct TreeProcess {
  pid_t pid, parent;
};
std::vector<TreeProcess> ProcessTree(pid_t pid);
// True while the process exists and is not a zombie.
bool ProcessAlive(pid_t pid);
// Checks CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN); the error names them.
Status CheckBpfCapabilities();

}  // namespace syspgo
