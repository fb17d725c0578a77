//===- files.h - the files syspgo writes and reads for the user ----------===//
// Every artifact, report, trace, plan and summary syspgo writes goes through
// WriteFileAtomically, and every input a user names is opened with
// OpenAsUser, so that under sudo both carry exactly the invoking user's
// rights (common/identity.h) and no other user's planted symlink or file
// can redirect them:
// - the data goes into a new file next to the target, created with
//   O_CREAT|O_EXCL|O_NOFOLLOW under a random name (a name planted in
//   advance, or a symlink, makes the create fail, never write elsewhere);
// - that file is renamed over the target, so a reader sees the old file or
//   the new one, never half of one, and an existing file is replaced only
//   where the user could have replaced it themselves (the kernel checks
//   the directory's write and sticky bits as the user): it is never
//   truncated in place, written through, or chowned;
// - the new file belongs to the user because the user created it.
#pragma once
#include <fcntl.h>
#include <sys/types.h>

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace syspgo {

// Writes `bytes` to `path` as above. The error names the path and what to do.
Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode = 0644);
// The same, with `write` filling the new file through a stdio stream.
Status WriteFileAtomically(const std::string& path, const std::function<Status(FILE*)>& write, mode_t mode = 0644);
// The same for an output that must not replace anything (redact's copy):
// if `path` exists, or appears meanwhile, it is left as it is and the error
// (EEXIST) says so.
Status WriteNewFileAtomically(const std::string& path, const std::function<Status(FILE*)>& write,
                              mode_t mode = 0644);

// The same for syspgo's own state (a cache only syspgo reads), with
// syspgo's rights rather than the user's: only for paths in a directory
// that root alone can write, which no user can name or plant in.
Status WriteOwnFileAtomically(const std::string& path, std::string_view bytes, mode_t mode = 0600);

// open(path, flags, mode) with the invoking user's rights (plain open when
// there is none), close-on-exec; -1 with errno set on failure, EPERM if the
// rights could not be taken on. For inputs (plans, the files a plan names)
// and for logs appended to.
int OpenAsUser(const std::string& path, int flags, mode_t mode = 0644);

// Paths from profiles and plans may name anything: a FIFO, whose open(2)
// waits for a writer forever; a device, a directory, a socket. So a file
// such a path names is opened with O_NONBLOCK (a FIFO's open returns at
// once, a tty's does not wait for carrier) and O_NOCTTY, then checked with
// fstat(2) on the descriptor (no path check that a rename could race) and
// refused unless it is a regular file; only then is O_NONBLOCK cleared for
// the reads. The open flags for that (OpenAsUser adds O_CLOEXEC):
inline constexpr int kOpenUntrustedFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY;
// What kind of file `mode` names, with its article, for messages: "a FIFO
// (named pipe)", "a character device", "a directory", "a regular file".
const char* FileKindName(mode_t mode);
// Why open(2) of `path` failed with errno `e`, naming the file `name`:
// "cannot open NAME: <errno text>", or, for a socket (which refuses open(2)
// itself, with ENXIO), "NAME is a socket, not a regular file, ...".
std::string DescribeOpenError(const std::string& path, int e, const std::string& name);
// The check on a descriptor opened with kOpenUntrustedFlags: an error
// naming the file (as `name`) and its kind unless it is a regular file,
// which then has O_NONBLOCK cleared. The caller closes `fd` either way.
Status RequireRegularFile(int fd, const std::string& name);
// OpenAsUser(path, kOpenUntrustedFlags) and RequireRegularFile: the
// descriptor of a regular file, or an error naming the path and why.
// `what` ("plan") goes before the path in the error.
Result<int> OpenRegularAsUser(const std::string& path, const std::string& what = "");

}  // namespace syspgo
