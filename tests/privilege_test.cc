//===- privilege_test.cc - least privilege under sudo ----------------------===//
// syspgo runs as root, but under sudo it acts for the invoking user: the
// recorded command runs as that user (unless --as-root), the database it
// creates is that user's and not group- or world-writable, and `syspgo
// prefetch` reads only files that user can read. sudo is simulated the way
// sudo tells its command who invoked it: SUDO_UID/SUDO_GID in the
// environment of a root process, here for user and group nobody (65534).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "collect/ownership.h"
#include "optimize/plan.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr uid_t kNobody = 65534;
const std::vector<std::string> kSudoEnv = {"env", "SUDO_UID=65534", "SUDO_GID=65534", "SUDO_USER=nobody"};

std::vector<std::string> UnderSudo(std::vector<std::string> argv) {
  std::vector<std::string> out = kSudoEnv;
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}


struct stat Stat(const std::string& p) {
  struct stat sb {};
  EXPECT_EQ(lstat(p.c_str(), &sb), 0) << p;
  return sb;
}

// A directory the unprivileged command can write into.
struct SharedDir : TempDir {
  SharedDir() { chmod(path().c_str(), 0777); }
};

TEST(Sudo, CommandRunsAsTheInvokingUser) {
  SharedDir dir;
  std::string out = dir.File("ids");
  auto r = RunCmd(UnderSudo({SyspgoBin(), "collect", "-o", dir.File("run.db"), "--", "sh", "-c",
                             "id -u > " + out + "; id -g >> " + out}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadAll(out), "65534\n65534\n");
}

TEST(Sudo, AsRootRunsTheCommandAsRootButTheDatabaseStaysTheUsers) {
  SharedDir dir;
  std::string out = dir.File("ids"), db = dir.File("run.db");
  auto r = RunCmd(UnderSudo({SyspgoBin(), "collect", "-o", db, "--as-root", "--", "sh", "-c",
                             "id -u > " + out + "; id -g >> " + out}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadAll(out), "0\n0\n");
  EXPECT_EQ(Stat(db).st_uid, kNobody);
}

TEST(Sudo, DatabaseAndItsWalAndShmBelongToTheInvokingUser) {
  SharedDir dir;
  std::string db = dir.File("run.db"), out = dir.File("stat");
  // The command (running as nobody) looks at the files while the run is
  // live: -wal and -shm exist only while a connection is open.
  auto r = RunCmd(UnderSudo({SyspgoBin(), "collect", "-o", db, "--", "sh", "-c",
                             "stat -c '%n %u %g %a' " + db + " " + db + "-wal " + db + "-shm > " + out}));
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(ReadAll(out));
  int seen = 0;
  for (std::string name; lines >> name;) {
    unsigned uid, gid;
    std::string mode;
    lines >> uid >> gid >> mode;
    ++seen;
    EXPECT_EQ(uid, kNobody) << name;
    EXPECT_EQ(gid, kNobody) << name;
    unsigned bits = std::stoul(mode, nullptr, 8);
    EXPECT_EQ(bits & 022, 0u) << name << " is group- or world-writable: " << mode;
  }
  EXPECT_EQ(seen, 3) << ReadAll(out);
  struct stat sb = Stat(db);
  EXPECT_EQ(sb.st_uid, kNobody);
  EXPECT_EQ(sb.st_mode & 022, 0u);
  // The user reads it without privileges.
  auto a = RunCmd({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", SyspgoBin(),
                   "analyze", db, "files"});
  EXPECT_EQ(a.status, 0) << a.err;
}

TEST(Sudo, AnExistingDatabaseKeepsItsOwner) {
  SharedDir dir;
  std::string db = dir.File("run.db");
  ASSERT_EQ(RunCmd({SyspgoBin(), "collect", "-o", db, "--", "true"}).status, 0);
  ASSERT_EQ(Stat(db).st_uid, 0u);
  auto r = RunCmd(UnderSudo({SyspgoBin(), "collect", "-o", db, "--", "true"}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Stat(db).st_uid, 0u) << "appending under sudo handed root's database to the invoking user";
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run"), 2);
}

// collect/ownership.h on its own, including what the collector never meets.
TEST(Ownership, CreatesOnlyNewFilesForTheUserWithoutGroupOrWorldWrite) {
  TempDir dir;
  std::string p = dir.File("new.db");
  mode_t old = umask(0);  // even a umask that allows everything
  Status st = CreateOwnedBy(p, {kNobody, kNobody});
  umask(old);
  ASSERT_TRUE(st.ok()) << st.error().message;
  struct stat sb = Stat(p);
  EXPECT_EQ(sb.st_uid, kNobody);
  EXPECT_EQ(sb.st_gid, kNobody);
  EXPECT_EQ(sb.st_mode & 0777, 0644u);
  EXPECT_EQ(sb.st_size, 0);

  std::string mine = dir.File("mine.db");
  std::ofstream(mine) << "root's";
  ASSERT_TRUE(CreateOwnedBy(mine, {kNobody, kNobody}).ok());
  EXPECT_EQ(Stat(mine).st_uid, 0u);
  EXPECT_EQ(ReadAll(mine), "root's");

  // A symlink planted where the database goes is neither followed nor chowned.
  std::string target = dir.File("target"), link = dir.File("link.db");
  std::ofstream(target) << "x";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ASSERT_TRUE(CreateOwnedBy(link, {kNobody, kNobody}).ok());
  EXPECT_EQ(Stat(target).st_uid, 0u);
  EXPECT_EQ(Stat(link).st_uid, 0u);

  Status bad = CreateOwnedBy("/nonexistent-dir/x.db", {kNobody, kNobody});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'/nonexistent-dir/x.db'"), std::string::npos) << bad.error().message;
}

TEST(Ownership, InvokingUserComesFromSudosVariables) {
  setenv("SUDO_UID", "65534", 1);
  setenv("SUDO_GID", "65533", 1);
  auto u = InvokingUserFromSudo();
  ASSERT_TRUE(u.ok() && u->has_value());
  EXPECT_EQ((*u)->uid, 65534u);
  EXPECT_EQ((*u)->gid, 65533u);
  setenv("SUDO_UID", "0", 1);  // root ran sudo: nothing changes hands
  u = InvokingUserFromSudo();
  EXPECT_TRUE(u.ok() && !u->has_value());
  setenv("SUDO_UID", "12x", 1);
  u = InvokingUserFromSudo();
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.error().message.find("SUDO_UID='12x'"), std::string::npos) << u.error().message;
  unsetenv("SUDO_UID");
  unsetenv("SUDO_GID");
  u = InvokingUserFromSudo();
  EXPECT_TRUE(u.ok() && !u->has_value());
}

// ---- syspgo prefetch under sudo ----------------------------------------------

void WriteFile(const std::string& p, size_t size, mode_t mode) {
  int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  ASSERT_GE(fd, 0) << p;
  std::string bytes(size, 'z');
  ASSERT_EQ(write(fd, bytes.data(), size), static_cast<ssize_t>(size));
  ASSERT_EQ(fsync(fd), 0);
  ASSERT_EQ(fchmod(fd, mode), 0);
  close(fd);
}

// Pages of `p` in the page cache (mincore on a mapping, which faults nothing in).
size_t ResidentPages(const std::string& p) {
  int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat sb {};
  fstat(fd, &sb);
  void* m = mmap(nullptr, sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return ~size_t{0};
  size_t pages = (sb.st_size + 4095) / 4096, n = 0;
  std::vector<unsigned char> v(pages);
  mincore(m, sb.st_size, v.data());
  munmap(m, sb.st_size);
  for (unsigned char c : v) n += c & 1;
  return n;
}

void Evict(const std::string& p) {
  int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  ASSERT_EQ(ResidentPages(p), 0u) << "could not evict " << p;
}

TEST(Sudo, PrefetchReadsOnlyFilesTheInvokingUserCanRead) {
  DamonPaused damon;  // it pages out what was just read (test_util.h)
  TempDir dir;
  chmod(dir.path().c_str(), 0755);
  std::string open_file = dir.File("public.bin"), secret = dir.File("secret.bin"), plan_path = dir.File("app.plan");
  WriteFile(open_file, 64 << 10, 0644);
  WriteFile(secret, 64 << 10, 0600);
  PlanBuilder b;
  for (const auto& p : {open_file, secret}) {
    DevIno di = StatFile(p);
    b.Add({p, di.dev, di.ino, 0, 64 << 10, p == secret ? 10u : 0u});
  }
  // A lookup inside a directory only root may search: walked as root, not as the user.
  std::string hidden_dir = dir.File("private"), hidden = hidden_dir + "/lib.so";
  ASSERT_EQ(mkdir(hidden_dir.c_str(), 0700), 0);
  WriteFile(hidden, 4096, 0644);
  b.AddLookup(open_file, 0);
  b.AddLookup(hidden, 1);
  auto built = b.Build();
  ASSERT_EQ(built.plan.files.size(), 2u);
  ASSERT_TRUE(WritePlan(built.plan, plan_path).ok());

  Evict(open_file);
  Evict(secret);
  auto r = RunCmd(UnderSudo({SyspgoBin(), "prefetch", plan_path}));
  EXPECT_EQ(r.status, 0) << r.err;
  // All 16 pages: DAMON, which paged out one of them once in three full
  // runs, is stopped meanwhile (DamonPaused, at the top).
  EXPECT_EQ(ResidentPages(open_file), 16u);
  EXPECT_EQ(ResidentPages(secret), 0u) << "root read a file the invoking user cannot read";
  EXPECT_NE(r.err.find("skipping " + secret), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("uid 65534"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("skipping " + open_file), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("looked up   2 paths (1 found)"), std::string::npos) << r.out;

  // As root without sudo, both are read: the skip above was the user's ids.
  Evict(open_file);
  Evict(secret);
  r = RunCmd({SyspgoBin(), "prefetch", plan_path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ResidentPages(open_file), 16u);
  EXPECT_EQ(ResidentPages(secret), 16u);
  EXPECT_NE(r.out.find("looked up   2 paths (2 found)"), std::string::npos) << r.out;
}


TEST(Sudo, PrefetchRunsTheCommandAsTheInvokingUser) {
  TempDir dir;
  chmod(dir.path().c_str(), 0777);
  std::string f = dir.File("public.bin"), plan_path = dir.File("app.plan"), id = dir.File("id");
  WriteFile(f, 64 << 10, 0644);
  PlanBuilder b;
  DevIno di = StatFile(f);
  b.Add({f, di.dev, di.ino, 0, 64 << 10, 0});
  ASSERT_TRUE(WritePlan(b.Build().plan, plan_path).ok());
  auto r = RunCmd(UnderSudo({SyspgoBin(), "prefetch", plan_path, "--", "sh", "-c", "id -u > " + id}));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadAll(id), "65534\n");
}

TEST(Sudo, ReportsAndTracesBelongToTheInvokingUser) {
  TempDir dir;
  chmod(dir.path().c_str(), 0777);
  std::string db = dir.File("run.db"), html = dir.File("r.html"), trace = dir.File("t.json");
  ASSERT_EQ(RunCmd({SyspgoBin(), "collect", "--probes", "fileio,sched", "-o", db, "--", "true"}).status, 0);
  auto r = RunCmd(UnderSudo({SyspgoBin(), "report", db, "-o", html}));
  EXPECT_EQ(r.status, 0) << r.err;
  r = RunCmd(UnderSudo({SyspgoBin(), "export", db, "-o", trace}));
  EXPECT_EQ(r.status, 0) << r.err;
  for (const auto& p : {html, trace}) {
    struct stat sb = Stat(p);
    EXPECT_EQ(sb.st_uid, 65534u) << p;
    EXPECT_EQ(sb.st_mode & (S_IWGRP | S_IWOTH), 0u) << p;
  }
}

}  // namespace
}  // namespace syspgo::test
