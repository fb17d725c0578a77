//===- identity.h - who syspgo acts for under sudo, and how it acts as them ===//
// syspgo is run with sudo: collect needs CAP_BPF and CAP_PERFMON, prefetch
// and pgo start programs for the user. Root's rights must reach no further
// than that. Every path the user gives is resolved, every file syspgo
// writes for them is created, and every command it starts for them runs,
// with exactly the rights of the user who ran sudo (as `sudo -u USER`
// would give them), so the kernel's own checks (modes, ACLs, sticky
// directories, protected symlinks) apply to that user and nothing syspgo
// writes or reads can reach further than they could themselves.
//
// This is the one place that knows who that user is and how to act as them:
// - InvokingUser(): SUDO_UID and SUDO_GID (both or neither, strict
//   decimal), with the passwd entry and supplementary groups of that uid.
// - DropToInvokingUser(): for commands that need no privilege at all
//   (analyze, report, optimize, ...): the whole process becomes the user.
// - ActAsUser: for commands that keep root for something (collect's BPF,
//   prefetch's page locking, pgo's collections): the calling thread's
//   filesystem ids and groups are the user's while it lives.
// - UserEnvironment() and BecomeUserInChild(): what a command started for
//   the user gets (uid, gid, initgroups groups, HOME/USER/LOGNAME/SHELL).
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace syspgo {

struct User {
  uid_t uid = 0;
  gid_t gid = 0;               // primary group (SUDO_GID)
  std::vector<gid_t> groups;   // supplementary groups as initgroups(3) gives them, gid included
  std::string name, home, shell;  // from passwd; a uid without an entry keeps "" here
};

// The user syspgo acts for: set when this process runs as root (euid 0) and
// SUDO_UID/SUDO_GID name a user other than root; nullopt otherwise (act as
// ourselves: not under sudo, or root ran sudo). An error when only one of
// the two is set or either is not a decimal id: the environment was
// tampered with, and guessing would run something with root's rights.
// Read once; every caller sees the same answer.
const Result<std::optional<User>>& InvokingUser();

// The invoking user, for a call site that must act as them: nullptr when
// there is none (nothing to switch), or the error of InvokingUser().
Result<const User*> InvokingUserOrNull();

// Makes the whole process the invoking user, permanently (groups, gid, uid;
// HOME/USER/LOGNAME/SHELL in the environment), if there is one; else does
// nothing. For commands that need no privilege: after it, everything they
// open, create and start carries the user's rights by construction.
Status DropToInvokingUser();

// While it lives, the calling thread's file access (open, create, stat,
// rename, unlink, ...) is the invoking user's: filesystem uid and gid and
// supplementary groups switched for this thread only (setfsuid/setfsgid are
// per thread; setgroups is made as a raw syscall, since glibc's wrapper
// changes every thread). With no invoking user nothing changes. ok() is
// false if the ids could not be switched: the caller must then not touch
// the file system (fail closed). A descriptor opened meanwhile keeps
// working after the ids are switched back.
class ActAsUser {
 public:
  ActAsUser();
  ~ActAsUser();
  ActAsUser(const ActAsUser&) = delete;
  ActAsUser& operator=(const ActAsUser&) = delete;
  bool ok() const { return ok_; }
  // The error to return when !ok(): names the user and what to do.
  Error error() const;

 private:
  bool switched_ = false, ok_ = true;
  std::vector<gid_t> saved_groups_;
  uid_t saved_fsuid_ = 0;
  gid_t saved_fsgid_ = 0;
};

// The environment a command started for `user` gets: ours, with HOME,
// USER, LOGNAME and SHELL from the user's passwd entry (as `sudo -u USER`
// sets them). Strings "KEY=VALUE", ready for execve.
std::vector<std::string> UserEnvironment(const User& user);

// In a child between fork and exec: become `user` for good (groups, gid,
// uid, in that order; ambient capabilities cleared). Only async-signal-safe
// calls. Returns 0 or the errno of the step that failed.
int BecomeUserInChild(const User& user);

// Strict decimal id ("0".."4294967294"); nullopt for anything else.
std::optional<uint32_t> ParseId(const char* s);

}  // namespace syspgo
