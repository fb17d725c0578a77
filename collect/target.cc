//===- target.cc - the process tree a collection follows -----------------===//
#include "collect/target.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

namespace syspgo {

Result<std::string> ResolveCommand(const std::string& argv0) {
  if (argv0.empty()) return MakeError("no command given: put it after '--', e.g. syspgo collect -o run.db -- ls");
  auto check = [&](const std::string& p) -> int {
    struct stat sb {};
    if (stat(p.c_str(), &sb) != 0) return errno;
    if (S_ISDIR(sb.st_mode)) return EISDIR;
    // AT_EACCESS: with the rights in force (the user's, under ActAsUser), not the real uid's.
    if (faccessat(AT_FDCWD, p.c_str(), X_OK, AT_EACCESS) != 0) return EACCES;
    return 0;
  };
  if (argv0.find('/') != std::string::npos) {
    int e = check(argv0);
    if (e == 0) return argv0;
    return MakeError("cannot run command '" + argv0 + "': " + strerror(e) +
                         (e == EACCES ? ". Make it executable (chmod +x)." : ". Check the path."),
                     e);
  }
  const char* path = getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  int last = ENOENT;
  std::stringstream ss(dirs);
  for (std::string d; std::getline(ss, d, ':');) {
    std::string p = (d.empty() ? "." : d) + "/" + argv0;
    int e = check(p);
    if (e == 0) return p;
    if (e != ENOENT) last = e;
  }
  return MakeError("command '" + argv0 + "' not found" +
                       (last == ENOENT ? std::string(" in PATH. Check its spelling or give its full path.")
                                       : std::string(": ") + strerror(last) + "."),
                   last);
}

Result<std::unique_ptr<HeldChild>> HeldChild::Spawn(const std::string& path, const std::vector<std::string>& argv,
                                                    const User* as) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.path = path;
  spec.user = as;
  spec.out = spec.err = ProcessOutput::Inherit();
  spec.inherit_stdin = true;
  spec.before_exec = [] {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    // The command must not inherit ambient capabilities the collector may
    // hold (CAP_BPF, CAP_PERFMON): it gets what its user has, no more.
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    return 0;
  };
  std::unique_ptr<HeldChild> c(new HeldChild());
  SYSPGO_TRY(c->Start(spec, true));
  return c;
}

Status CheckPid(pid_t pid) {
  if (pid <= 0) return MakeError("-p needs a process id greater than 0, got " + std::to_string(pid), EINVAL);
  if (!ProcessAlive(pid))
    return MakeError("no process with pid " + std::to_string(pid) + ". Check it with 'ps -p " + std::to_string(pid) +
                         "', or start the program under syspgo: syspgo collect -o run.db -- COMMAND",
                     ESRCH);
  return {};
}

namespace {

// The id lines of /proc/PID/status every id of which must be the user's
// (real, effective, saved, filesystem), as ptrace(2) requires.
struct IdRule {
  const char* line;  // "Uid:"
  const char* what;  // "uid"
  uid_t User::*mine;
};
constexpr IdRule kIdRules[] = {{"Uid:", "uid", &User::uid}, {"Gid:", "gid", &User::gid}};

}  // namespace

Result<std::string> WhyNotTheUsers(pid_t pid, const User& user) {
  std::string base = "/proc/" + std::to_string(pid);
  std::ifstream f(base + "/status");
  int lines = 0;
  for (std::string line; std::getline(f, line);) {
    for (const IdRule& r : kIdRules) {
      if (line.rfind(r.line, 0) != 0) continue;
      ++lines;
      std::istringstream ids(line.substr(strlen(r.line)));
      for (unsigned long id; ids >> id;)
        if (id != user.*r.mine)
          return std::string("runs as ") + r.what + " " + std::to_string(id) + ", not as " + r.what + " " +
                 std::to_string(user.*r.mine) + " who ran sudo";
    }
    if (line.rfind("CapPrm:", 0) == 0) {
      ++lines;
      if (strtoull(line.c_str() + 7, nullptr, 16) != 0)
        return "holds capabilities (CapPrm:" + line.substr(7) + ") that uid " + std::to_string(user.uid) + " lacks";
    }
  }
  // The files in /proc/PID are owned by the process's effective ids only
  // while it is dumpable, otherwise by root (the directory itself keeps
  // them either way).
  struct stat sb {};
  if (lines != 3 || stat((base + "/stat").c_str(), &sb) != 0)
    return MakeError("cannot read the owner of pid " + std::to_string(pid) + " (it may have exited).", ESRCH);
  if (sb.st_uid != user.uid || sb.st_gid != user.gid)
    return std::string("is not dumpable (a setuid or setgid program, or one that asked not to be with "
                       "prctl PR_SET_DUMPABLE), so uid ") +
           std::to_string(user.uid) + " could not read its memory";
  return std::string();
}

Status CheckMayAttach(pid_t pid, const User& user) {
  auto why = WhyNotTheUsers(pid, user);
  if (!why) return why.error();
  if (why->empty()) return {};
  return MakeError("pid " + std::to_string(pid) + " " + *why +
                       ": under sudo syspgo records only processes you could trace yourself (same uids and gids, "
                       "no capabilities, dumpable). Run it as root without sudo to record this one.",
                   EPERM);
}

bool ProcessAlive(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(f, s)) return false;
  size_t rp = s.rfind(')');
  if (rp == std::string::npos || rp + 2 >= s.size()) return false;
  char state = s[rp + 2];
  return state != 'Z' && state != 'X';
}

std::vector<TreeProcess> ProcessTree(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end;
      long pid = strtol(e->d_name, &end, 10);
      if (*end || pid <= 0) continue;
      std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
      std::string s;
      if (!std::getline(f, s)) continue;
      size_t rp = s.rfind(')');
      if (rp == std::string::npos) continue;
      std::istringstream is(s.substr(rp + 2));
      char state;
      long ppid = 0;
      is >> state >> ppid;
      children.emplace(ppid, pid);
    }
    closedir(d);
  }
  std::vector<TreeProcess> out{{root, 0}};
  for (size_t i = 0; i < out.size(); ++i) {
    auto [b, e] = children.equal_range(out[i].pid);
    for (auto it = b; it != e; ++it) out.push_back({it->second, out[i].pid});
  }
  return out;
}

Status CheckBpfCapabilities() {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &hdr, data) != 0) return MakeError(std::string("capget: ") + strerror(errno), errno);
  auto has = [&](int cap) { return (data[cap / 32].effective >> (cap % 32)) & 1; };
  constexpr int kCapSysAdmin = 21, kCapPerfmon = 38, kCapBpf = 39;
  if (has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon))) return {};
  std::string missing = !has(kCapBpf) && !has(kCapPerfmon) ? "CAP_BPF and CAP_PERFMON"
                        : !has(kCapBpf)                     ? "CAP_BPF"
                                                            : "CAP_PERFMON";
  return MakeError("syspgo collect loads eBPF programs and needs " + missing +
                       " (or CAP_SYS_ADMIN). Run it as root, e.g. 'sudo syspgo collect ...'.",
                   EPERM);
}

}  // namespace syspgo
