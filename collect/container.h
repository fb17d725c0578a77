//===- container.h - a container's cgroup, through its runtime ------------===//
// `collect --container NAME|ID` records a container as `--cgroup` records a
// cgroup: the runtime names the container's init process, and that
// process's cgroup is the container's. podman, docker and crictl (for
// containerd and CRI-O) are asked in turn; each lookup runs as the
// invoking user under sudo, so only their own containers are found.
// Also the cgroup and container of any process, for its `process` row.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/result.h"

namespace syspgo {

struct ContainerScope {
  std::string runtime;  // the runtime that knew it: podman, docker, crictl
  std::string id;       // its full id
  pid_t pid = 0;        // its init process
  std::string cgroup;   // its cgroup directory (memory v1 if mounted, else v2)
};

// The running container `name` (a name or id), from the first runtime
// installed that knows it; an error listing what each runtime said.
Result<ContainerScope> ResolveContainer(const std::string& name);

// The cgroup of `pid` as /proc/PID/cgroup gives it, relative to its
// hierarchy's root: the memory (v1) controller's when it is in one, else
// the unified (v2) one's; "" if the process is gone.
std::string ProcessCgroup(pid_t pid);
// The container id in a cgroup path (the last run of 64 hex digits, as
// podman's libpod-ID, docker's docker-ID.scope and containerd's
// cri-containerd-ID.scope name it); "" if none.
std::string ContainerIdOf(const std::string& cgroup);

// Where the root directory of `pid` lies as this process sees it, when the
// two are in different mount namespaces (a container's process): its mount
// of "/" (/proc/PID/mountinfo) found among this namespace's mounts of the
// same device. "" when they share a namespace, the process is gone, or its
// root is mounted nowhere here.
std::string HostPathOfRoot(pid_t pid);

// `path` as a process whose root directory lies at `root` here finds it:
// its symbolic links followed, an absolute one from `root`; "" past 40 links.
std::string ResolveBelow(const std::string& root, const std::string& path);

// Where the roots of other mount namespaces (containers') lie here, met
// through their processes. A process there names its files as it sees them
// (the kernel's walk up a file's dentries ends at its namespace's root), and
// its events are read after it may be gone: its root is noted while it runs
// (when it becomes a target), and a name it gave is found below the roots.
class ForeignRoots {
 public:
  // Notes where the root of `pid`'s mount namespace lies, once a namespace.
  void Add(pid_t pid);
  // `path` as a process named the file (dev, ino): itself if it names that
  // file here, else the path below the first root noted where it does, else "".
  std::string Find(const std::string& path, uint64_t dev, uint64_t ino) const;

 private:
  std::unordered_set<uint64_t> namespaces_;  // mount namespaces looked up
  std::vector<std::string> roots_;           // where those other than ours lie here
};

}  // namespace syspgo
