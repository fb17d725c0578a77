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

// open(path, flags, mode) with the invoking user's rights (plain open when
// there is none), close-on-exec; -1 with errno set on failure, EPERM if the
// rights could not be taken on. For inputs (plans, the files a plan names)
// and for logs appended to.
int OpenAsUser(const std::string& path, int flags, mode_t mode = 0644);

}  // namespace syspgo
