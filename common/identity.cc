//===- identity.cc - who syspgo acts for under sudo, and how it acts as them ==//
#include "common/identity.h"

#include <grp.h>
#include <pwd.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace syspgo {

std::optional<uint32_t> ParseId(const char* s) {
  // Digits only: no sign, space or base prefix that strtoul would accept,
  // and at most the 10 digits of 4294967294 ((uid_t)-1 means "no change").
  if (!s || !*s || strlen(s) > 10 || strspn(s, "0123456789") != strlen(s)) return std::nullopt;
  unsigned long long v = strtoull(s, nullptr, 10);
  if (v >= 0xffffffffULL) return std::nullopt;
  return static_cast<uint32_t>(v);
}

namespace {

Result<std::optional<User>> ReadInvokingUser() {
  const char* su = getenv("SUDO_UID");
  const char* sg = getenv("SUDO_GID");
  if (geteuid() != 0 || (!su && !sg)) return std::optional<User>{};
  auto uid = ParseId(su), gid = ParseId(sg);
  if (!uid || !gid)
    return MakeError(std::string("SUDO_UID='") + (su ? su : "(unset)") + "' and SUDO_GID='" + (sg ? sg : "(unset)") +
                         "' do not both name a numeric user and group, so syspgo cannot tell whose rights to act "
                         "with. Run it through sudo unchanged, or unset both to act as root.",
                     EINVAL);
  if (*uid == 0) return std::optional<User>{};  // root ran sudo: root keeps its rights
  User u;
  u.uid = *uid;
  u.gid = *gid;
  u.groups = {u.gid};
  passwd pw {};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(u.uid, &pw, buf.data(), buf.size(), &found) == 0 && found) {
    u.name = pw.pw_name;
    u.home = pw.pw_dir;
    u.shell = pw.pw_shell;
    // The groups initgroups(3) would give, as sudo -u does.
    int n = 32;
    std::vector<gid_t> g(static_cast<size_t>(n));
    while (getgrouplist(pw.pw_name, u.gid, g.data(), &n) < 0) g.resize(static_cast<size_t>(n) + 1), n = static_cast<int>(g.size());
    g.resize(static_cast<size_t>(n));
    if (std::find(g.begin(), g.end(), u.gid) == g.end()) g.insert(g.begin(), u.gid);
    u.groups = g;
  }
  return std::optional<User>{u};
}

// Set once DropToInvokingUser has made the process the user: from then on
// there is nobody else to act for.
bool g_dropped = false;

}  // namespace

const Result<std::optional<User>>& InvokingUser() {
  static const Result<std::optional<User>> user = ReadInvokingUser();
  if (g_dropped) {
    static const Result<std::optional<User>> none = std::optional<User>{};
    return none;
  }
  return user;
}

Result<const User*> InvokingUserOrNull() {
  const auto& u = InvokingUser();
  if (!u.ok()) return u.error();
  return u.value() ? &*u.value() : nullptr;
}

std::vector<std::string> UserEnvironment(const User& user) {
  const std::pair<const char*, std::string> set[] = {
      {"HOME", user.home.empty() ? "/" : user.home},
      {"USER", user.name.empty() ? std::to_string(user.uid) : user.name},
      {"LOGNAME", user.name.empty() ? std::to_string(user.uid) : user.name},
      {"SHELL", user.shell.empty() ? "/bin/sh" : user.shell},
  };
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    bool replaced = false;
    for (const auto& [key, value] : set) {
      size_t n = strlen(key);
      if (strncmp(*e, key, n) == 0 && (*e)[n] == '=') replaced = true;
    }
    if (!replaced) env.emplace_back(*e);
  }
  for (const auto& [key, value] : set) env.push_back(std::string(key) + "=" + value);
  return env;
}

int BecomeUserInChild(const User& user) {
  // Raw syscalls: the child of a threaded parent has one thread, and
  // glibc's wrappers for these are not async-signal-safe.
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (syscall(SYS_setgroups, user.groups.size(), user.groups.data()) != 0) return errno;
  if (syscall(SYS_setresgid, user.gid, user.gid, user.gid) != 0) return errno;
  if (syscall(SYS_setresuid, user.uid, user.uid, user.uid) != 0) return errno;
  return 0;
}

Status DropToInvokingUser() {
  auto user = InvokingUserOrNull();
  if (!user.ok()) return user.error();
  if (!*user) return {};
  const User& u = **user;
  for (const std::string& kv : UserEnvironment(u)) {
    size_t eq = kv.find('=');
    setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1);
  }
  // glibc's wrappers here change every thread of the process, as they must.
  if (setgroups(u.groups.size(), u.groups.data()) != 0 || setresgid(u.gid, u.gid, u.gid) != 0 ||
      setresuid(u.uid, u.uid, u.uid) != 0)
    return MakeError("cannot switch to uid " + std::to_string(u.uid) + " (the user who ran sudo): " + strerror(errno) +
                         ". Nothing was read or written.",
                     errno);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  g_dropped = true;
  return {};
}

ActAsUser::ActAsUser() {
  // After DropToInvokingUser, or without root, we already are whoever we act for.
  auto user = InvokingUserOrNull();
  if (!user.ok()) {
    ok_ = false;
    return;
  }
  if (!*user || geteuid() != 0) return;
  const User& u = **user;
  int n = getgroups(0, nullptr);
  saved_groups_.resize(static_cast<size_t>(std::max(n, 0)));
  if (n > 0 && getgroups(n, saved_groups_.data()) < 0) saved_groups_.clear();
  saved_fsuid_ = static_cast<uid_t>(setfsuid(static_cast<uid_t>(-1)));
  saved_fsgid_ = static_cast<gid_t>(setfsgid(static_cast<gid_t>(-1)));
  switched_ = true;
  if (syscall(SYS_setgroups, u.groups.size(), u.groups.data()) != 0) {
    ok_ = false;
    return;
  }
  setfsgid(u.gid);
  setfsuid(u.uid);
  // setfsuid/setfsgid return the previous id, not failure: read them back.
  ok_ = setfsuid(static_cast<uid_t>(-1)) == static_cast<int>(u.uid) &&
        setfsgid(static_cast<gid_t>(-1)) == static_cast<int>(u.gid);
}

ActAsUser::~ActAsUser() {
  if (!switched_) return;
  int e = errno;
  setfsuid(saved_fsuid_);  // first: it gives back the filesystem capabilities
  setfsgid(saved_fsgid_);
  syscall(SYS_setgroups, saved_groups_.size(), saved_groups_.data());
  errno = e;
}

Error ActAsUser::error() const {
  const auto& u = InvokingUser();
  if (!u.ok()) return u.error();
  return MakeError("cannot take on the file access rights of uid " + std::to_string(u.value() ? u.value()->uid : 0) +
                       " (the user who ran sudo), so nothing was opened. Run syspgo as that user or as root without "
                       "sudo.",
                   EPERM);
}

}  // namespace syspgo
