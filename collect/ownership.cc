//===- ownership.cc - a profile database recorded under sudo is the user's ==//
#include "collect/ownership.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace syspgo {
namespace {

// A decimal id that fits id_t, or nullopt.
std::optional<unsigned long> ParseId(const char* s) {
  if (!s || !*s) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end || s[0] == '-' || v >= static_cast<unsigned long>(static_cast<uid_t>(-1))) return std::nullopt;
  return v;
}

}  // namespace

Result<std::optional<InvokingUser>> InvokingUserFromSudo() {
  const char* su = getenv("SUDO_UID");
  const char* sg = getenv("SUDO_GID");
  if (geteuid() != 0 || (!su && !sg)) return std::optional<InvokingUser>{};
  auto uid = ParseId(su), gid = ParseId(sg);
  if (!uid || !gid)
    return MakeError(std::string("SUDO_UID='") + (su ? su : "") + "' and SUDO_GID='" + (sg ? sg : "") +
                         "' do not both name a numeric user and group. Run syspgo through sudo unchanged, or unset "
                         "both to act as root.",
                     EINVAL);
  if (*uid == 0) return std::optional<InvokingUser>{};  // root ran sudo: root keeps the files
  return std::optional<InvokingUser>{InvokingUser{static_cast<uid_t>(*uid), static_cast<gid_t>(*gid)}};
}

Status CreateOwnedBy(const std::string& path, const InvokingUser& user) {
  // O_EXCL: only a file made here is chowned, never one that was there
  // (or that a symlink points to), even if it appears between two calls.
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return {};
    return MakeError("cannot create profile database '" + path + "': " + strerror(errno) +
                         ". Check that the directory exists and is writable, or pass another -o path.",
                     errno);
  }
  mode_t mask = umask(0);
  umask(mask);
  Status st;
  if (fchown(fd, user.uid, user.gid) != 0)
    st = MakeError("cannot give the new profile database '" + path + "' to uid " + std::to_string(user.uid) + ": " +
                       strerror(errno) + ". Record to a local file system, or run with --as-root and chown it.",
                   errno);
  else if (fchmod(fd, 0644 & ~mask & ~(S_IWGRP | S_IWOTH)) != 0)
    st = MakeError("cannot set the mode of the new profile database '" + path + "': " + strerror(errno), errno);
  close(fd);
  if (!st.ok()) unlink(path.c_str());  // an empty root-owned file would only confuse the next run
  return st;
}

Status CreateDbForInvokingUser(const std::string& path) {
  auto user = InvokingUserFromSudo();
  if (!user) return user.error();
  if (!user->has_value()) return {};
  return CreateOwnedBy(path, **user);
}

Status GiveToInvokingUser(const std::string& path) {
  auto user = InvokingUserFromSudo();
  if (!user) return user.error();
  if (!user->has_value()) return {};
  struct stat sb {};
  if (lstat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) return {};
  if (lchown(path.c_str(), (*user)->uid, (*user)->gid) != 0 ||
      chmod(path.c_str(), sb.st_mode & 07777 & ~(S_IWGRP | S_IWOTH)) != 0)
    return MakeError("wrote '" + path + "' but cannot give it to uid " + std::to_string((*user)->uid) + ": " +
                     strerror(errno) + ". chown it yourself, or write it to a local file system.", errno);
  return {};
}

}  // namespace syspgo
