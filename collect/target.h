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

#include "common/result.h"

namespace syspgo {

// Finds argv0 like execvp would; the error says why it cannot run.
Result<std::string> ResolveCommand(const std::string& argv0);

// A child forked and waiting before its exec.
class HeldChild {
 public:
  HeldChild() = default;
  HeldChild(const HeldChild&) = delete;
  HeldChild& operator=(const HeldChild&) = delete;
  ~HeldChild();
  // Forks; the child waits until Release(), then execs `path` with argv.
  // With run_uid/run_gid >= 0 the child drops to that user before exec.
  static Result<std::unique_ptr<HeldChild>> Spawn(const std::string& path, const std::vector<std::string>& argv,
                                                  int run_uid = -1, int run_gid = -1);
  pid_t pid() const { return pid_; }
  // Lets the child exec. Returns an error if the exec failed.
  Status Release();
  // Non-blocking reap: true when the child has exited; *status as a shell reports it.
  bool Reap(int* status, bool block = false);

 private:
  pid_t pid_ = -1;
  int go_fd_ = -1;    // write end: one byte releases the child
  int err_fd_ = -1;   // read end: the child writes errno here if exec fails
  bool reaped_ = false;
};

// Checks that `pid` names a live process; the error says what to do.
Status CheckPid(pid_t pid);
// pid and every process descended from it, parents first.
std::vector<pid_t> ProcessTree(pid_t pid);
// True while the process exists and is not a zombie.
bool ProcessAlive(pid_t pid);
// Checks CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN); the error names them.
Status CheckBpfCapabilities();

}  // namespace syspgo
