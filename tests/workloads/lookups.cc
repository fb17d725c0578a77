//===- lookups.cc - one call of each path-lookup syscall fileio records --===//
// `lookups DIR`: makes DIR/file and DIR/link -> DIR/file, then makes each
// call below through syscall(2), so that the syscall number and arguments
// are exactly these whatever the C library would choose. Prints nothing;
// collect_test.cc checks the file_lookup rows against this list.
#include <fcntl.h>
#include <linux/stat.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::string dir = argv[1], file = dir + "/file", link = dir + "/link", missing = dir + "/missing";
  int fd = open(file.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0 || symlink(file.c_str(), link.c_str()) != 0) return 3;
  struct stat st;
  struct statx stx;
  char buf[4096];
  char* const args[] = {const_cast<char*>("x"), nullptr};
  syscall(SYS_stat, file.c_str(), &st);
  syscall(SYS_lstat, link.c_str(), &st);
  syscall(SYS_access, missing.c_str(), F_OK);
  syscall(SYS_readlink, link.c_str(), buf, sizeof buf);
  syscall(SYS_newfstatat, AT_FDCWD, file.c_str(), &st, AT_SYMLINK_NOFOLLOW);
  syscall(SYS_readlinkat, AT_FDCWD, link.c_str(), buf, sizeof buf);
  syscall(SYS_faccessat, AT_FDCWD, file.c_str(), R_OK);
  syscall(SYS_statx, AT_FDCWD, missing.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx);
  syscall(SYS_faccessat2, AT_FDCWD, file.c_str(), R_OK, AT_EACCESS);
  syscall(SYS_execve, missing.c_str(), args, args + 1);
  syscall(SYS_execveat, AT_FDCWD, missing.c_str(), args, args + 1, AT_SYMLINK_NOFOLLOW);
  // fstat in both forms: a descriptor, no path; not lookups.
  syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH);
  syscall(SYS_fstat, fd, &st);
  close(fd);
  return 0;
}
