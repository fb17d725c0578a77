//===- scope.cc - what a collection records besides one process tree -----===//
#include "collect/scope.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "common/identity.h"

namespace syspgo {
namespace {

constexpr char kCgroupRoot[] = "/sys/fs/cgroup";

// The collector's own cgroup in the hierarchy whose /proc/self/cgroup
// controller field is `controllers` ("memory"; "" for v2), or "" if absent.
std::string OwnCgroup(const std::string& controllers) {
  std::ifstream f("/proc/self/cgroup");
  for (std::string line; std::getline(f, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    if (line.substr(a + 1, b - a - 1) == controllers) return line.substr(b + 1);
  }
  return "";
}

// The hierarchies a new cgroup is made in: the mount under kCgroupRoot and
// the /proc/self/cgroup field naming it.
struct Hierarchy {
  const char* mount;
  const char* field;
};
constexpr Hierarchy kHierarchies[] = {{"memory", "memory"}, {"unified", ""}};

}  // namespace

// The cgroup path is the user's: under sudo it is checked and read with
// their filesystem ids (cgroup.procs is world-readable), so naming a path in
// a directory they cannot enter reveals nothing and reads nothing as root.
Status CheckCgroupDir(const std::string& dir) {
  ActAsUser as_user;
  if (!as_user.ok()) return as_user.error();
  if (faccessat(AT_FDCWD, (dir + "/cgroup.procs").c_str(), R_OK, AT_EACCESS) == 0) return {};
  return MakeError("'" + dir + "' is not a cgroup directory (no readable cgroup.procs): give its path under " +
                       kCgroupRoot + ", e.g. " + kCgroupRoot + "/memory/NAME or a v2 path",
                   errno ? errno : ENOENT);
}

Result<std::vector<pid_t>> CgroupProcs(const std::string& dir) {
  ActAsUser as_user;
  if (!as_user.ok()) return as_user.error();
  std::ifstream f(dir + "/cgroup.procs");
  if (!f) return MakeError("cannot read " + dir + "/cgroup.procs: " + strerror(errno), errno);
  std::vector<pid_t> out;
  for (long p; f >> p;) out.push_back(static_cast<pid_t>(p));
  return out;
}

std::vector<pid_t> AllProcesses() {
  std::vector<pid_t> out;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end;
      long pid = strtol(e->d_name, &end, 10);
      if (!*end && pid > 0) out.push_back(static_cast<pid_t>(pid));
    }
    closedir(d);
  }
  return out;
}

Status NewCgroup::Create() {
  std::string name = "syspgo-" + std::to_string(getpid());
  for (const Hierarchy& h : kHierarchies) {
    std::string mount = std::string(kCgroupRoot) + "/" + h.mount;
    if (access((mount + "/cgroup.procs").c_str(), F_OK) != 0) continue;
    std::string own = OwnCgroup(h.field);
    if (own.empty()) continue;
    std::string dir = mount + (own == "/" ? "" : own) + "/" + name;
    if (mkdir(dir.c_str(), 0755) != 0)
      return MakeError("--new-cgroup: cannot make cgroup " + dir + ": " + strerror(errno) +
                           ". Check that the hierarchy is writable (run as root).",
                       errno);
    dirs_.push_back(dir);
    if (std::string(h.mount) == "memory") memory_ = dir;
  }
  if (dirs_.empty())
    return MakeError(std::string("--new-cgroup: no memory (v1) or unified (v2) cgroup hierarchy mounted under ") +
                     kCgroupRoot);
  return {};
}

Status NewCgroup::Add(pid_t pid) {
  for (const std::string& d : dirs_) {
    std::ofstream f(d + "/cgroup.procs");
    f << pid << "\n";
    f.flush();
    if (!f) return MakeError("--new-cgroup: cannot move pid " + std::to_string(pid) + " into " + d, EIO);
  }
  return {};
}

std::string NewCgroup::Describe() const {
  std::string s;
  for (const std::string& d : dirs_) s += (s.empty() ? "" : ", ") + d;
  return s;
}

NewCgroup::~NewCgroup() {
  // A command that outlived the recording (--duration) keeps its cgroup busy.
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it)
    if (rmdir(it->c_str()) != 0)
      fprintf(stderr, "syspgo: warning: cannot remove cgroup %s: %s (remove it when its processes ended)\n",
              it->c_str(), strerror(errno));
}

}  // namespace syspgo
