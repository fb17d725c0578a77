//===- process.h - start a program, held or not, and wait for it ----------===//
// The one way syspgo starts a program (pgo's builds, tools and collections,
// the command prefetch starts, the command collect records): argv with an
// environment on top of ours, optionally as the invoking user
// (common/identity.h), stdout and stderr each captured, appended to a file,
// discarded or inherited, and back the exit status, the wall time and what
// was captured. RunProcess runs a program to its end; ChildProcess holds
// one before its exec until the caller releases it (collect attaches its
// probes meanwhile) and reaps it when the caller asks. An exec that fails
// is reported as an error naming the program and why, never as a child's
// exit status 127 that a caller would have to tell from the program's own.
#pragma once
#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/identity.h"
#include "common/result.h"

namespace syspgo {

// Where one of the child's output streams goes.
struct ProcessOutput {
  enum class Kind {
    kCapture,  // into ProcessResult::out / err
    kFile,     // appended to `path` (created 0644), opened with OpenAsUser: the user's rights under sudo
    kDiscard,  // /dev/null
    kInherit,  // ours
  };
  Kind kind = Kind::kCapture;
  std::string path;  // kFile

  static ProcessOutput Capture() { return {}; }
  static ProcessOutput File(std::string path) { return {Kind::kFile, std::move(path)}; }
  static ProcessOutput Discard() { return {Kind::kDiscard, ""}; }
  static ProcessOutput Inherit() { return {Kind::kInherit, ""}; }
};

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on our PATH (execvpe(3)), not on `env`'s, unless `path`
  std::string path;               // the program's file, when the caller found it (collect, as the user)
  // Set on top of the base environment (ours, or the user's as
  // UserEnvironment makes it when `user` is set); a key with an empty value
  // is removed.
  std::map<std::string, std::string> env;
  const User* user = nullptr;  // become this user for good before the exec (BecomeUserInChild)
  ProcessOutput out, err;
  bool err_to_out = false;  // stderr goes where stdout goes (2>&1); `err` is ignored
  bool inherit_stdin = false;  // else stdin is /dev/null
  // As system(3) does for a command run in the foreground: SIGINT and
  // SIGQUIT are ignored in this process while the child runs (the terminal
  // sends them to the child too, and its status tells what they did), and
  // the child gets the dispositions we were started with.
  bool ignore_interrupts = false;
  // Runs in the child after its descriptors are set (and, when held, after
  // the release) and before it becomes `user` and execs: signal
  // dispositions, capabilities. Async-signal-safe calls only (the parent
  // may have threads). Returns 0, or an errno that ends the child and
  // becomes the error of RunProcess or ChildProcess::Release.
  std::function<int()> before_exec;
};

struct ProcessResult {
  int status = 0;        // exit status, or 128+N for signal N (as a shell reports it)
  double seconds = 0;    // from the fork to the child's end
  std::string out, err;  // what was captured
};

// Runs `spec` and waits for it. An error (its code the errno, its message
// "cannot run PROGRAM: why") when the program could not be started: a log
// that cannot be opened, no such program, not executable, the user that
// could not be become, a failed before_exec. A program that ran and failed
// is a result with its status.
Result<ProcessResult> RunProcess(const ProcessSpec& spec);

// A program started from a ProcessSpec and held before its exec.
class ChildProcess {
 public:
  // Forks a child that waits until Release(),
  // polling (poll is no file-I/O syscall, so a recording that starts
  // meanwhile sees nothing of the wait). If we exit first, it says so on
  // its stderr and ends with status 125 instead of running the program.
  // The error, when the child could not be forked, is as RunProcess's.
  // Its output goes to a file, /dev/null or ours: nothing would read a
  // capture, so one is refused.
  static Result<std::unique_ptr<ChildProcess>> SpawnHeld(const ProcessSpec& spec);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  virtual ~ChildProcess();  // neither kills nor reaps the child

  pid_t pid() const { return pid_; }
  // Lets the child exec (at once for RunProcess's). An error, as
  // RunProcess's, when the exec or what comes before it failed; the child
  // has then ended.
  Status Release();
  // Reaps the child, waiting for it if `block`: true once it has ended,
  // with *status as a shell reports it (128+N for signal N, which a
  // command can also exit with).
  bool Reap(int* status, bool block = false);
  // After Reap returned true: whether a signal ended the child, from the
  // raw wait status (WIFSIGNALED), since `exit 200` and SIGSEGV (139) both
  // look like a signal in the shell's form.
  bool Signaled() const;

 protected:
  ChildProcess();
  // Forks the child of `spec`; held until Release() if `held`.
  Status Start(const ProcessSpec& spec, bool held);

 private:
  friend Result<ProcessResult> RunProcess(const ProcessSpec& spec);
  struct State;
  std::unique_ptr<State> state_;
  pid_t pid_ = -1;
};

}  // namespace syspgo
