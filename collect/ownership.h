//===- ownership.h - a profile database recorded under sudo is the user's ===//
// `sudo syspgo collect -o run.db` runs as root, but the database is the
// invoking user's data: they must be able to read, copy and delete it
// without sudo. The collector creates a new database file owned by the
// invoking user (SUDO_UID/SUDO_GID) before SQLite opens it; SQLite, running
// as root, then gives its -wal and -shm files the owner and mode of the
// database file. An existing file is never chowned: appending to someone
// else's database must not hand it to the invoking user.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>

#include "common/result.h"

namespace syspgo {

struct InvokingUser {
  uid_t uid = 0;
  gid_t gid = 0;
};

// The user who ran `sudo syspgo ...`: set when this process runs as root
// (euid 0) and SUDO_UID/SUDO_GID name a user other than root. An error
// when they are set but are not numbers (the environment was tampered with).
Result<std::optional<InvokingUser>> InvokingUserFromSudo();

// Creates `path` as an empty file owned by `user`, mode 0644 less the umask
// and never group- or world-writable, if it does not exist; leaves an
// existing file (or symlink) alone. OpenProfileDb() treats the empty file as
// a new database. The error names the path and what to do.
Status CreateOwnedBy(const std::string& path, const InvokingUser& user);

// Under sudo, CreateOwnedBy(path, invoking user); otherwise nothing. The one
// call the collector makes, before OpenProfileDb().
Status CreateDbForInvokingUser(const std::string& path);

// Under sudo, gives an output file this process just wrote (a report, a
// trace, an artifact) to the invoking user, without group or world write;
// otherwise nothing. Symlinks are never followed.
Status GiveToInvokingUser(const std::string& path);

}  // namespace syspgo
