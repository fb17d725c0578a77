//===- process.cc - start a program, held or not, and wait for it ---------===//
#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "common/files.h"

extern char** environ;

namespace syspgo {
namespace {

// The child's environment: the base (ours, or the user's) with spec.env on top.
std::vector<std::string> Environment(const ProcessSpec& spec) {
  std::vector<std::string> base;
  if (spec.user) base = UserEnvironment(*spec.user);
  else
    for (char** e = environ; *e; ++e) base.emplace_back(*e);
  std::vector<std::string> out;
  for (const std::string& kv : base)
    if (!spec.env.count(kv.substr(0, kv.find('=')))) out.push_back(kv);
  for (const auto& [k, v] : spec.env)
    if (!v.empty()) out.push_back(k + "=" + v);
  return out;
}

// One stream's descriptors: `child` becomes its fd in the child (-1: left as
// ours), `parent` is the read end of a capture pipe (-1: none).
struct Stream {
  int child = -1, parent = -1;
  std::string* into = nullptr;
};

void Close(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

Status Open(const ProcessOutput& o, const std::string& program, Stream* s) {
  int fd = -1;
  switch (o.kind) {
    case ProcessOutput::Kind::kCapture: {
      int p[2];
      if (pipe2(p, O_CLOEXEC) != 0)
        return MakeError("cannot run " + program + ": cannot create a pipe: " + strerror(errno), errno);
      s->parent = p[0];
      s->child = p[1];
      return {};
    }
    case ProcessOutput::Kind::kFile:
      fd = OpenAsUser(o.path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW);
      if (fd < 0) return MakeError("cannot run " + program + ": cannot open its log " + o.path + ": " + strerror(errno), errno);
      break;
    case ProcessOutput::Kind::kDiscard:
      fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (fd < 0) return MakeError("cannot run " + program + ": cannot open /dev/null: " + strerror(errno), errno);
      break;
    case ProcessOutput::Kind::kInherit:
      break;
  }
  s->child = fd;
  return {};
}

// In the child: `fd` as descriptor `target`, open across the exec.
bool MoveTo(int fd, int target) {
  if (fd < 0) return true;
  if (fd == target) return fcntl(fd, F_SETFD, 0) == 0;  // dup2 onto itself would keep close-on-exec
  return dup2(fd, target) == target;
}

// SIGINT and SIGQUIT ignored while it lives, if `on`
// (ProcessSpec::ignore_interrupts), and what the child gets instead.
class InterruptsIgnored {
 public:
  explicit InterruptsIgnored(bool on) : on_(on) {
    if (!on_) return;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, &old_[0]);
    sigaction(SIGQUIT, &ignore, &old_[1]);
  }
  ~InterruptsIgnored() {
    if (!on_) return;
    sigaction(SIGINT, &old_[0], nullptr);
    sigaction(SIGQUIT, &old_[1], nullptr);
  }
  InterruptsIgnored(const InterruptsIgnored&) = delete;
  InterruptsIgnored& operator=(const InterruptsIgnored&) = delete;

  // In the child: what the exec would have made of the dispositions we were
  // started with (a handler of ours becomes the default; ignored stays
  // ignored). Async-signal-safe; 0 or the errno.
  int RestoreInChild() const {
    if (!on_) return 0;
    int signals[] = {SIGINT, SIGQUIT};
    for (int i = 0; i < 2; ++i) {
      struct sigaction a {};
      a.sa_handler = old_[i].sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL;
      if (sigaction(signals[i], &a, nullptr) != 0) return errno;
    }
    return 0;
  }

 private:
  bool on_;
  struct sigaction old_[2] {};
};

// Reads the capture pipes until the child (and whatever inherited them)
// has closed them all.
void Drain(Stream* streams, size_t n) {
  for (;;) {
    pollfd fds[2];
    Stream* of[2];
    nfds_t k = 0;
    for (size_t i = 0; i < n; ++i)
      if (streams[i].parent >= 0) fds[k] = {streams[i].parent, POLLIN, 0}, of[k++] = &streams[i];
    if (k == 0) return;
    if (poll(fds, k, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (nfds_t i = 0; i < k; ++i) {
      if (!fds[i].revents) continue;
      char buf[1 << 16];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) Close(of[i]->parent);
      else of[i]->into->append(buf, static_cast<size_t>(got));
    }
  }
}

// In the child, before the exec: waits for the parent's go byte, and ends
// with status 125 if the parent closed its end first.
void AwaitRelease(int go) {
  pollfd p{go, POLLIN, 0};
  while (poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
  char go_byte = 0;
  if (read(go, &go_byte, 1) != 1) {
    static const char msg[] = "syspgo: syspgo exited before starting the command; not running it\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(125);
  }
}

// Why `program` could not be started, from the errno its child reported.
Error StartError(const std::string& program, int e) {
  std::string why = strerror(e);
  if (e == ENOENT && program.find('/') == std::string::npos) why = "no such program on PATH";
  return MakeError("cannot run " + program + ": " + why, e);
}

}  // namespace

// Everything the child needs and the parent keeps until it is reaped.
struct ChildProcess::State {
  std::string program;
  Stream streams[2];  // stdout, stderr
  int in = -1;        // the child's stdin (/dev/null), until forked
  int report[2] = {-1, -1};  // the child's errno if its exec failed; end-of-file once it succeeded
  int go[2] = {-1, -1};      // held: one byte releases the child
  std::optional<InterruptsIgnored> interrupts;
  std::chrono::steady_clock::time_point started;
  bool reaped = false;
  int wait_status = 0;  // as waitpid(2) gave it, once reaped

  ~State() {
    for (Stream& s : streams) Close(s.child), Close(s.parent);
    for (int* fd : {&in, &report[0], &report[1], &go[0], &go[1]}) Close(*fd);
  }
  // Opens the descriptors the child gets, before the fork.
  Status Open(const ProcessSpec& spec, bool held) {
    Status opened = ::syspgo::Open(spec.out, program, &streams[0]);
    if (opened.ok() && !spec.err_to_out) opened = ::syspgo::Open(spec.err, program, &streams[1]);
    if (opened.ok() && !spec.inherit_stdin && (in = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
      opened = MakeError("cannot run " + program + ": cannot open /dev/null: " + strerror(errno), errno);
    if (opened.ok() && (pipe2(report, O_CLOEXEC) != 0 || (held && pipe2(go, O_CLOEXEC) != 0)))
      opened = MakeError("cannot run " + program + ": cannot create a pipe: " + strerror(errno), errno);
    return opened;
  }
  // In the child: everything up to the exec; returns the errno it met.
  int Prepare(const ProcessSpec& spec) {
    Close(report[0]);
    Close(go[1]);  // only the parent may hold it: if it dies before the release, we see end-of-file
    if (go[0] >= 0) AwaitRelease(go[0]);
    if (!MoveTo(in, 0) || !MoveTo(streams[0].child, 1) ||
        !(spec.err_to_out ? dup2(1, 2) == 2 : MoveTo(streams[1].child, 2)))
      return errno;
    int e = interrupts->RestoreInChild();
    if (!e && spec.before_exec) e = spec.before_exec();
    if (!e && spec.user) e = BecomeUserInChild(*spec.user);
    return e;
  }
};

ChildProcess::ChildProcess() : state_(std::make_unique<State>()) {}
ChildProcess::~ChildProcess() = default;

Status ChildProcess::Start(const ProcessSpec& spec, bool held) {
  if (spec.argv.empty() || spec.argv[0].empty()) return MakeError("no program to run (an empty command line)", EINVAL);
  State& st = *state_;
  st.program = spec.path.empty() ? spec.argv[0] : spec.path;
  std::vector<std::string> env_strings = Environment(spec);
  std::vector<char*> args, envp;
  for (const std::string& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  SYSPGO_TRY(st.Open(spec, held));

  st.started = std::chrono::steady_clock::now();
  st.interrupts.emplace(spec.ignore_interrupts);
  pid_t pid = fork();
  if (pid == 0) {
    // The exec's outcome goes back through `report`, which the exec closes.
    int e = st.Prepare(spec);
    if (!e) {
      if (spec.path.empty()) execvpe(args[0], args.data(), envp.data());
      else execve(spec.path.c_str(), args.data(), envp.data());
      e = errno;
    }
    (void)!write(st.report[1], &e, sizeof e);
    _exit(127);
  }
  int e = errno;
  Close(st.report[1]);
  Close(st.go[0]);
  Close(st.in);
  for (Stream& s : st.streams) Close(s.child);
  if (pid < 0) {
    st.interrupts.reset();
    return MakeError("cannot run " + st.program + ": cannot fork: " + strerror(e), e);
  }
  pid_ = pid;
  return {};
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::SpawnHeld(const ProcessSpec& spec) {
  constexpr auto kCapture = ProcessOutput::Kind::kCapture;
  if (spec.out.kind == kCapture || (!spec.err_to_out && spec.err.kind == kCapture))
    return MakeError("cannot hold a program whose output is captured: nothing would read it (give a file, "
                     "Discard or Inherit)",
                     EINVAL);
  std::unique_ptr<ChildProcess> c(new ChildProcess());
  SYSPGO_TRY(c->Start(spec, true));
  return c;
}

Status ChildProcess::Release() {
  State& st = *state_;
  if (st.go[1] >= 0) {
    char b = 1;
    if (write(st.go[1], &b, 1) != 1)
      return MakeError("cannot run " + st.program + ": cannot release it: " + strerror(errno), errno);
    Close(st.go[1]);
  }
  int e = 0;
  if (read(st.report[0], &e, sizeof e) != sizeof e) e = 0;  // end-of-file: the exec closed it
  Close(st.report[0]);
  if (e != 0) return StartError(st.program, e);
  return {};
}

bool ChildProcess::Reap(int* status, bool block) {
  State& st = *state_;
  if (!st.reaped) {
    int ws = 0;
    pid_t r;
    do {
      r = waitpid(pid_, &ws, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r != pid_) return false;
    st.reaped = true;
    st.wait_status = ws;
    st.interrupts.reset();
  }
  *status = WIFEXITED(st.wait_status) ? WEXITSTATUS(st.wait_status) : 128 + WTERMSIG(st.wait_status);
  return true;
}

bool ChildProcess::Signaled() const { return state_->reaped && WIFSIGNALED(state_->wait_status); }

Result<ProcessResult> RunProcess(const ProcessSpec& spec) {
  ChildProcess c;
  SYSPGO_TRY(c.Start(spec, false));
  ProcessResult r;
  ChildProcess::State& st = *c.state_;
  st.streams[0].into = &r.out;
  st.streams[1].into = &r.err;
  Status released = c.Release();
  Drain(st.streams, 2);
  c.Reap(&r.status, true);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.started).count();
  if (!released.ok()) return released.error();
  return r;
}

}  // namespace syspgo
