//===- scope.h - what a collection records besides one process tree ------===//
// A cgroup made for the command (--new-cgroup), every process of a cgroup
// (--cgroup) or of the host (--all). Processes in a cgroup are found by
// reading its cgroup.procs, at the start and again at every drain tick:
// that works for v1 and v2 paths alike on any kernel, where comparing a
// task's cgroup in BPF needs bpf_task_get_cgroup1 (6.8) for v1.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include "common/result.h"

namespace syspgo {

// What a refusal under sudo of a scope that records processes syspgo did not
// start (--all; a --cgroup or --container whose cgroup is not all the user's)
// tells the user to do; it follows the scope's name.
inline constexpr char kScopeNeedsRoot[] =
    ": under sudo it is refused; it needs real root. Run syspgo as root itself, without sudo, to record it, or "
    "record a command of your own: syspgo collect -o DB -- COMMAND.";

// The pids in `dir`/cgroup.procs; an error naming the path if unreadable.
Result<std::vector<pid_t>> CgroupProcs(const std::string& dir);
// Every process on the host, from /proc.
std::vector<pid_t> AllProcesses();
// Checks that `dir` is a cgroup directory (it holds cgroup.procs).
Status CheckCgroupDir(const std::string& dir);

// Fresh cgroups, children of the collector's own memory cgroup (v1) and,
// when mounted, of its v2 cgroup, that the command is put in before it
// runs; removed when this is destroyed (after the command exited).
class NewCgroup {
 public:
  NewCgroup() = default;
  NewCgroup(const NewCgroup&) = delete;
  NewCgroup& operator=(const NewCgroup&) = delete;
  ~NewCgroup();
  Status Create();
  Status Add(pid_t pid);
  // The memory cgroup's path under its hierarchy's mount, "" if none.
  const std::string& memory_path() const { return memory_; }
  std::string Describe() const;

 private:
  std::string memory_;            // full directory path, v1 memory
  std::vector<std::string> dirs_;  // every directory made, to remove
};

}  // namespace syspgo
