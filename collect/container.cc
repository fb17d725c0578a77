//===- container.cc - a container's cgroup, through its runtime -----------===//
#include "collect/container.h"

#include <unistd.h>

#include <cctype>
#include <fstream>
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

}  // namespace

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
