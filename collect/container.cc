//===- container.cc - a container's cgroup, through its runtime -----------===//
#include "collect/container.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <deque>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "collect/scope.h"
#include "common/identity.h"
#include "common/process.h"
#include "common/util.h"

namespace syspgo {
namespace {

// How each runtime prints a container's init pid and full id.
struct Runtime {
  const char* name;
  std::vector<std::string> inspect;  // the container's name is appended
};
const Runtime kRuntimes[] = {
    {"podman", {"podman", "inspect", "--type", "container", "--format", "{{.State.Pid}} {{.Id}}"}},
    {"docker", {"docker", "inspect", "--type", "container", "--format", "{{.State.Pid}} {{.Id}}"}},
    {"crictl", {"crictl", "inspect", "--output", "go-template", "--template", "{{.info.pid}} {{.status.id}}"}},
};

// Where a /proc/PID/cgroup line's hierarchy is mounted, by its controller
// field, in the order a process's cgroup is chosen: memory (v1) first, the
// one page-cache charges and reclaim follow; then v2, under "unified" on a
// hybrid host, at the root on a v2-only one.
struct Mount {
  const char* field;
  const char* dir;
};
constexpr Mount kMounts[] = {
    {"memory", "/sys/fs/cgroup/memory"}, {"", "/sys/fs/cgroup/unified"}, {"", "/sys/fs/cgroup"}};

// /proc/PID/cgroup's path for each controller field ("" is v2).
std::vector<std::pair<std::string, std::string>> CgroupLines(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/cgroup");
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string line; std::getline(f, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string field = line.substr(a + 1, b - a - 1);
    for (const std::string& c : Split(field, ','))
      if (c == "memory") field = "memory";
    out.push_back({field, line.substr(b + 1)});
  }
  return out;
}

// The directory of `pid`'s cgroup (see kMounts), or "" if none is mounted.
std::string CgroupDir(pid_t pid) {
  auto lines = CgroupLines(pid);
  for (const Mount& m : kMounts)
    for (auto& [field, path] : lines)
      if (field == m.field && access((std::string(m.dir) + path + "/cgroup.procs").c_str(), F_OK) == 0)
        return std::string(m.dir) + (path == "/" ? "" : path);
  return "";
}

// Asks one runtime, as the invoking user: ESRCH when it knows the container
// but it is not running, ENOENT when it does not know it (or is missing).
Result<ContainerScope> Ask(const Runtime& rt, const std::string& name, const User* user) {
  ProcessSpec spec;
  spec.argv = rt.inspect;
  spec.argv.push_back(name);
  spec.user = user;
  auto r = RunProcess(spec);
  if (!r) return MakeError(std::string(rt.name) + " is not installed", ENOENT);
  if (r->status != 0) return MakeError(std::string(rt.name) + ": " + Trim(r->err.empty() ? r->out : r->err), ENOENT);
  std::istringstream is(r->out);
  ContainerScope c{rt.name, "", 0, ""};
  long pid = 0;
  is >> pid >> c.id;
  if (pid <= 0) return MakeError(std::string(rt.name) + ": container '" + name + "' is not running; start it first", ESRCH);
  c.pid = static_cast<pid_t>(pid);
  return c;
}

// One line of /proc/PID/mountinfo: the device, the directory of its file
// system mounted (its "root") and where.
struct MountLine {
  std::string dev, root, point;
};

// mountinfo escapes space, tab, newline and backslash as \NNN (octal).
std::string Unescape(const std::string& s) {
  auto octal = [&](size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '7'; };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<MountLine> Mounts(const std::string& proc) {
  std::ifstream f(proc + "/mountinfo");
  std::vector<MountLine> out;
  for (std::string line; std::getline(f, line);) {
    std::istringstream is(line);
    std::string id, parent, dev, root, point;
    if (is >> id >> parent >> dev >> root >> point) out.push_back({dev, Unescape(root), Unescape(point)});
  }
  return out;
}

// `path` below `dir` ("/" below itself), as the rest after `dir`; nullopt if not below.
std::optional<std::string> Below(const std::string& dir, const std::string& path) {
  if (dir == "/") return path == "/" ? "" : path;
  if (path == dir) return "";
  if (path.rfind(dir + "/", 0) == 0) return path.substr(dir.size());
  return std::nullopt;
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat x {}, y {};
  return stat(a.c_str(), &x) == 0 && stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

}  // namespace

std::string HostPathOfRoot(pid_t pid) {
  std::string proc = "/proc/" + std::to_string(pid);
  if (SameFile(proc + "/ns/mnt", "/proc/self/ns/mnt")) return "";
  const MountLine* top = nullptr;  // the last mount on "/" is the one in force
  auto theirs = Mounts(proc);
  for (const MountLine& m : theirs)
    if (m.point == "/") top = &m;
  if (!top) return "";
  for (const MountLine& m : Mounts("/proc/self")) {
    if (m.dev != top->dev) continue;
    auto rest = Below(m.root, top->root);
    if (!rest) continue;
    std::string host = (m.point == "/" ? "" : m.point) + *rest;
    if (host.empty()) host = "/";
    if (SameFile(host, proc + "/root")) return host == "/" ? "" : host;
  }
  return "";
}

std::string ResolveBelow(const std::string& root, const std::string& path) {
  std::deque<std::string> rest;
  for (const std::string& part : Split(path, '/')) rest.push_back(part);
  std::string done;  // resolved so far, below root
  for (int links = 0; !rest.empty();) {
    std::string part = rest.front();
    rest.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      done = done.substr(0, done.rfind('/') == std::string::npos ? 0 : done.rfind('/'));
      continue;
    }
    std::string target = ReadLinkOrEmpty(root + done + "/" + part);
    if (target.empty()) {
      done += "/" + part;
      continue;
    }
    if (++links > 40) return "";
    if (target[0] == '/') done.clear();
    auto parts = Split(target, '/');
    rest.insert(rest.begin(), parts.begin(), parts.end());
  }
  return root + (done.empty() ? "/" : done);
}

void ForeignRoots::Add(pid_t pid) {
  struct stat ns {};
  if (stat(("/proc/" + std::to_string(pid) + "/ns/mnt").c_str(), &ns) != 0 || !namespaces_.insert(ns.st_ino).second)
    return;
  std::string root = HostPathOfRoot(pid);
  if (!root.empty()) roots_.push_back(root);
}

std::string ForeignRoots::Find(const std::string& path, uint64_t dev, uint64_t ino) const {
  auto names = [&](const std::string& p) {
    struct stat sb {};
    return stat(p.c_str(), &sb) == 0 && sb.st_dev == dev && sb.st_ino == ino;
  };
  if (path.empty() || path[0] != '/') return "";
  if (names(path)) return path;
  for (const std::string& root : roots_)
    if (names(root + path)) return root + path;
  return "";
}

Result<ContainerScope> ResolveContainer(const std::string& name) {
  auto user = InvokingUserOrNull();
  if (!user) return user.error();
  std::string said;
  for (const Runtime& rt : kRuntimes) {
    auto c = Ask(rt, name, *user);
    if (!c) {
      if (c.error().code == ESRCH) return c.error();
      said += (said.empty() ? "" : "; ") + c.error().message;
      continue;
    }
    c->cgroup = CgroupDir(c->pid);
    if (c->cgroup.empty())
      return MakeError("--container " + name + ": its init process " + std::to_string(c->pid) + " (" + rt.name +
                           ") has no cgroup under /sys/fs/cgroup (it may have exited); start the container again",
                       ESRCH);
    return c;
  }
  // Under sudo the runtimes are asked as the user: a container they do not
  // know is not theirs, or does not exist, and the user is not told which.
  std::string sudo = std::string(", as yourself. Under sudo only your own containers are looked up, so one of "
                                 "root's or of another user's is not found") + kScopeNeedsRoot;
  return MakeError("--container " + name + ": no runtime knows a container of that name or id (" + said +
                       "). List them with 'podman ps' or 'docker ps'" + (*user ? sudo : "."),
                   ENOENT);
}

std::string ProcessCgroup(pid_t pid) {
  auto lines = CgroupLines(pid);
  for (const char* want : {"memory", ""})
    for (auto& [field, path] : lines)
      if (field == want) return path;
  return "";
}

std::string ContainerIdOf(const std::string& cgroup) {
  size_t run = 0;
  std::string last;
  for (size_t i = 0; i <= cgroup.size(); ++i) {
    if (i < cgroup.size() && isxdigit(static_cast<unsigned char>(cgroup[i])) && !isupper(static_cast<unsigned char>(cgroup[i]))) {
      ++run;
      continue;
    }
    if (run == 64) last = cgroup.substr(i - 64, 64);
    run = 0;
  }
  return last;
}

}  // namespace syspgo
