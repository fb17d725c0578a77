//===- container.h - a container's cgroup, through its runtime ------------===//
// `collect --container NAME|ID` records a container as `--cgroup` records a
// cgroup: the runtime names the container's init process, and that
// process's cgroup is the container's. podman, docker and crictl (for
// containerd and CRI-O) are asked in turn; each lookup runs as the
// invoking user under sudo, so only their own containers are found.
// Also the cgroup and container of any process, for its `process` row.
#pragma once
#include <sys/types.h>

#include <string>

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

}  // namespace syspgo
