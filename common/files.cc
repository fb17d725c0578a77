//===- files.cc - the files syspgo writes and reads for the user ---------===//
#include "common/files.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>

#include "common/identity.h"

namespace syspgo {
namespace {

// " as uid N (the user who ran sudo)" under sudo, else "": an EACCES is
// then about that user's rights, not root's.
std::string AsWhom() {
  auto user = InvokingUserOrNull();
  if (!user.ok() || !*user) return "";
  return " as uid " + std::to_string((*user)->uid) + " (the user who ran sudo)";
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A name no one can have planted: dot, the target's name, 16 random hex digits.
std::string TempNameFor(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  unsigned char r[8] = {};
  if (getrandom(r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
    uint64_t t = static_cast<uint64_t>(getpid()) * 0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(time(nullptr));
    memcpy(r, &t, sizeof r);
  }
  char hex[17];
  for (int i = 0; i < 8; ++i) snprintf(hex + 2 * i, 3, "%02x", r[i]);
  return dir + "." + base + ".syspgo-" + hex;
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return MakeError("cannot write '" + path + "': " + strerror(errno) + ". Check free space.", errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

enum class Rights { kUser, kSyspgo };
enum class Existing { kReplace, kKeep };

// Puts `tmp` at `path`. With kKeep an existing `path` stays and the call
// fails with EEXIST: renameat2's RENAME_NOREPLACE, or, on a file system
// without it, link(2), which never replaces either.
int PutInPlace(const std::string& tmp, const std::string& path, Existing existing) {
  if (existing == Existing::kReplace) return rename(tmp.c_str(), path.c_str());
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (link(tmp.c_str(), path.c_str()) != 0) return -1;
  unlink(tmp.c_str());
  return 0;
}

// Creates the temporary, lets `fill` write it, renames it over `path`; all
// path operations with the user's rights (kUser) or syspgo's own (kSyspgo:
// its state, in a directory only root writes).
Status Replace(const std::string& path, mode_t mode, const std::function<Status(int fd)>& fill,
               Rights rights = Rights::kUser, Existing existing = Existing::kReplace) {
  if (path.empty()) return MakeError("no output file given: name one with -o FILE.", EINVAL);
  std::string tmp;
  int fd = -1;
  {
    std::optional<ActAsUser> as_user;
    if (rights == Rights::kUser) as_user.emplace();
    if (as_user && !as_user->ok()) return as_user->error();
    for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
      tmp = TempNameFor(path);
      fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
      if (fd < 0 && errno != EEXIST) break;
    }
  }
  if (fd < 0)
    return MakeError("cannot write '" + path + "': cannot create a file in " + DirOf(path) + AsWhom() + ": " +
                         strerror(errno) + ". Check that the directory exists and that you can write to it, or "
                         "choose another output path.",
                     errno);
  Status st = fill(fd);
  if (close(fd) != 0 && st.ok())
    st = MakeError("cannot write '" + path + "': " + strerror(errno) + ". Check free space.", errno);
  std::optional<ActAsUser> as_user;
  if (rights == Rights::kUser) as_user.emplace();
  if (as_user && !as_user->ok()) return as_user->error();
  if (st.ok() && PutInPlace(tmp, path, existing) != 0)
    st = MakeError(errno == EEXIST && existing == Existing::kKeep
                       ? "'" + path + "' already exists; it is never overwritten. Pass another path or remove it."
                       : "cannot put '" + path + "' in place" + AsWhom() + ": " + strerror(errno) +
                             (errno == EISDIR ? ". It is a directory: give a file path."
                                              : ". Choose another output path."),
                   errno);
  if (!st.ok()) unlink(tmp.c_str());
  return st;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode) {
  return Replace(path, mode, [&](int fd) { return WriteAll(fd, bytes, path); });
}

Status WriteOwnFileAtomically(const std::string& path, std::string_view bytes, mode_t mode) {
  return Replace(path, mode, [&](int fd) { return WriteAll(fd, bytes, path); }, Rights::kSyspgo);
}

// Replace's `fill` for a writer through a stdio stream.
std::function<Status(int)> ThroughStdio(const std::string& path, const std::function<Status(FILE*)>& write) {
  return [&path, &write](int fd) -> Status {
    int own = dup(fd);  // fclose closes its own descriptor; Replace closes fd
    FILE* f = own >= 0 ? fdopen(own, "w") : nullptr;
    if (!f) {
      if (own >= 0) close(own);
      return MakeError("cannot write '" + path + "': " + strerror(errno) + ".", errno);
    }
    Status st = write(f);
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !err) err = errno;
    if (st.ok() && err)
      st = MakeError("cannot write '" + path + "': " + strerror(err) + ". Check free space.", err);
    return st;
  };
}

Status WriteFileAtomically(const std::string& path, const std::function<Status(FILE*)>& write, mode_t mode) {
  return Replace(path, mode, ThroughStdio(path, write));
}

Status WriteNewFileAtomically(const std::string& path, const std::function<Status(FILE*)>& write, mode_t mode) {
  return Replace(path, mode, ThroughStdio(path, write), Rights::kUser, Existing::kKeep);
}

int OpenAsUser(const std::string& path, int flags, mode_t mode) {
  ActAsUser as_user;
  if (!as_user.ok()) {
    errno = EPERM;
    return -1;
  }
  return open(path.c_str(), flags | O_CLOEXEC, mode);
}

const char* FileKindName(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO (named pipe)";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
  }
  return "a file of unknown type";
}

std::string DescribeOpenError(const std::string& path, int e, const std::string& name) {
  struct stat st {};
  if (e == ENXIO && stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return name + " is " + FileKindName(st.st_mode) + ", not a regular file, so it was not read";
  return "cannot open " + name + ": " + strerror(e);
}

Status RequireRegularFile(int fd, const std::string& name) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return MakeError("cannot stat " + name + ": " + strerror(errno), errno);
  if (!S_ISREG(st.st_mode))
    return MakeError(name + " is " + FileKindName(st.st_mode) + ", not a regular file, so it was not read", EINVAL);
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    return MakeError("cannot clear O_NONBLOCK on " + name + ": " + strerror(errno), errno);
  return {};
}

Result<int> OpenRegularAsUser(const std::string& path, const std::string& what) {
  std::string name = what.empty() ? path : what + " " + path;
  int fd = OpenAsUser(path, kOpenUntrustedFlags);
  if (fd < 0) {
    int e = errno;
    return MakeError(DescribeOpenError(path, e, name), e);
  }
  if (Status st = RequireRegularFile(fd, name); !st.ok()) {
    close(fd);
    return st.error();
  }
  return fd;
}

}  // namespace syspgo
