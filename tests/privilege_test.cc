//===- privilege_test.cc - root safety under sudo: the attack suite -------===//
// syspgo runs as root through sudo, and some sites grant it in sudoers to
// people who are not otherwise root. Then every path it is given, every
// file it writes and every command it starts must carry exactly the
// invoking user's rights (common/identity.h, common/files.h). Each test
// here is one way a user could try to make root do more for them, run
// through real sudo as a real unprivileged user: syspgo-test, whom
// scripts/test-setup.sh creates (with a supplementary group) and allows to run
// this clone's syspgo and syspgo-prefetch as root, and nothing else.
// Victim files are root's, in root's directories; each test asserts the
// attempt is refused with an error naming the path, or harmless.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "common/util.h"
#include "optimize/plan.h"
#include "tests/sudo_fixture.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// A plan over `files` (whole files), written by root to `path`.
void WriteTestPlan(const std::vector<std::string>& files, const std::string& path) {
  PlanBuilder b;
  uint64_t t = 0;
  for (const auto& f : files) {
    DevIno di = StatFile(f);
    b.Add({f, di.dev, di.ino, 0, 8192, t++});
  }
  ASSERT_TRUE(WritePlan(b.Build().plan, path).ok());
}

// ---- 1. Outputs over root's files --------------------------------------------

TEST_F(Sudo, OutputsNeverReplaceOrTruncateRootsFiles) {
  UserDir mine;
  RootDir roots;
  std::string db = RecordRun(mine);
  chown(db.c_str(), User().uid, User().gid);
  std::string victim = roots.File("victim");
  const std::string before = "root's data\n";
  struct Case {
    std::vector<std::string> argv;
  };
  const std::vector<Case> cases = {
      {{SyspgoBin(), "report", db, "-o", victim}},
      {{SyspgoBin(), "export", db, "-o", victim}},
      {{SyspgoBin(), "optimize", db, "--emit", "pprof", "-o", victim}},
      {{SyspgoBin(), "optimize", db, "--emit", "folded", "-o", victim}},
      {{SyspgoBin(), "merge", db, "--emit", "folded", "-o", victim}},
      {{SyspgoBin(), "redact", db, "-o", victim}},
  };
  for (const Case& c : cases) {
    WriteFile(victim, before, 0644);
    auto r = RunCmd(ViaSudo(c.argv));
    std::string what = JoinShell(c.argv);
    EXPECT_NE(r.status, 0) << what << " wrote over root's file";
    EXPECT_NE(r.err.find(victim), std::string::npos) << what << ": the error does not name the path: " << r.err;
    EXPECT_EQ(ReadAll(victim), before) << what;
    EXPECT_EQ(Lstat(victim).st_uid, 0u) << what << " gave root's file away";
  }
  // Nothing was left beside it either (no temporary, no -wal).
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(roots.path())) ++entries, (void)e;
  EXPECT_EQ(entries, 1);
}

TEST_F(Sudo, OutputsAreTheUsersAndReplaceOnlyWhatTheUserCouldReplace) {
  UserDir mine;
  std::string db = RecordRun(mine);
  chown(db.c_str(), User().uid, User().gid);
  const std::vector<std::pair<std::string, std::vector<std::string>>> outputs = {
      {"r.html", {"report", db, "-o"}},          {"t.json", {"export", db, "-o"}},
      {"p.pb.gz", {"optimize", db, "--emit", "pprof", "-o"}}, {"m.folded", {"merge", db, "--emit", "folded", "-o"}},
      {"red.db", {"redact", db, "-o"}},
  };
  for (const auto& [name, args] : outputs) {
    std::string out = mine.File(name);
    std::vector<std::string> argv = {SyspgoBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(out);
    auto r = RunCmd(ViaSudo(argv));
    ASSERT_EQ(r.status, 0) << JoinShell(argv) << ": " << r.err;
    struct stat sb = Lstat(out);
    EXPECT_EQ(sb.st_uid, User().uid) << out;
    EXPECT_EQ(sb.st_gid, User().gid) << out;
    EXPECT_EQ(sb.st_mode & (S_IWGRP | S_IWOTH), 0u) << out;
  }
  // A root-owned file in the user's own directory is the user's to replace
  // (they could `mv` over it): replaced by a new file, root's inode untouched.
  std::string out = mine.File("old.html"), keep = mine.File("old-link");
  WriteFile(out, "root's\n", 0644);
  ASSERT_EQ(link(out.c_str(), keep.c_str()), 0);
  auto r = RunCmd(ViaSudo({SyspgoBin(), "report", db, "-o", out}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lstat(out).st_uid, User().uid);
  EXPECT_EQ(ReadAll(keep), "root's\n") << "the old file was written in place, not replaced";
}

// ---- 2. --json inside a root-only directory ------------------------------------

TEST_F(Sudo, PrefetchJsonCannotBeWrittenWhereTheUserCannotWrite) {
  UserDir mine;
  TempDir secret;  // 0700, root's
  std::string data = mine.File("data"), plan = mine.File("app.plan");
  WriteFile(data, std::string(8192, 'd'), 0644);
  WriteTestPlan({data}, plan);
  for (const std::string& bin : {PrefetchBin(), SyspgoBin()}) {
    std::vector<std::string> argv = {bin};
    if (bin == SyspgoBin()) argv.push_back("prefetch");
    std::string json = secret.File("summary.json");
    argv.insert(argv.end(), {plan, "--json", json});
    auto r = RunCmd(ViaSudo(argv));
    EXPECT_NE(r.status, 0) << bin;
    EXPECT_NE(r.err.find(json), std::string::npos) << r.err;
    EXPECT_FALSE(Exists(json)) << bin << " wrote into a root-only directory";
    // Where the user can write, it is theirs.
    json = mine.File("summary.json");
    argv.back() = json;
    r = RunCmd(ViaSudo(argv));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(Lstat(json).st_uid, User().uid);
    unlink(json.c_str());
  }
}

// ---- 3. Fingerprinting root's files through a crafted database --------------------

TEST_F(Sudo, APlanRevealsNothingOfFilesTheUserCannotRead) {
  UserDir mine;
  TempDir hidden;  // 0700, root's
  std::string pin = hidden.File("pin");
  WriteFile(pin, "4711\n", 0600);
  std::string decoy1 = mine.File("decoy1"), decoy2 = mine.File("decoy2");
  WriteFile(decoy1, std::string(20000, 'a'), 0644);
  WriteFile(decoy2, std::string(20000, 'b'), 0644);
  std::string db = mine.File("crafted.db");
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "fileio,faults", "-o", db, "--", "cat", decoy1, decoy2});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(ExecSql(db, "UPDATE file SET path = '/etc/shadow' WHERE path = '" + decoy1 + "'"), "");
  ASSERT_EQ(ExecSql(db, "UPDATE file SET path = '" + pin + "' WHERE path = '" + decoy2 + "'"), "");
  Db d = OpenDb(db);
  ASSERT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file WHERE path IN ('/etc/shadow', '" + pin + "')"), 2);
  chown(db.c_str(), User().uid, User().gid);
  std::string plan = mine.File("x.plan");
  r = RunCmd(ViaSudo({SyspgoBin(), "optimize", db, "--emit", "plan", "--pages", "touched", "-o", plan}));
  // A plan of nothing may be refused or written empty; either way nothing of the two files is in it.
  std::string listing = Exists(plan) ? RunCmd({SyspgoBin(), "plan-show", plan}).out : "";
  EXPECT_EQ(listing.find("/etc/shadow"), std::string::npos) << listing;
  EXPECT_EQ(listing.find(pin), std::string::npos) << listing;
  for (const std::string& f : {std::string("/etc/shadow"), pin}) {
    struct stat sb {};
    ASSERT_EQ(stat(f.c_str(), &sb), 0);
    std::string ino = std::to_string(sb.st_ino), size = std::to_string(sb.st_size);
    EXPECT_EQ(r.err.find("inode " + ino), std::string::npos) << "root told the user " << f << "'s inode: " << r.err;
    EXPECT_EQ(r.out.find("inode " + ino), std::string::npos) << r.out;
  }
  EXPECT_NE(r.err.find("/etc/shadow"), std::string::npos) << "the file left out should be named: " << r.err;
}

// ---- 4. Symlinks at the output path ---------------------------------------------

TEST_F(Sudo, OutputsNeverWriteThroughASymlink) {
  UserDir mine;
  RootDir roots;
  std::string db = RecordRun(mine);
  chown(db.c_str(), User().uid, User().gid);
  std::string victim = roots.File("victim"), out = mine.File("trace.json");
  WriteFile(victim, "root's\n", 0644);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"export", db, "-o", out}, {"report", db, "-o", out},
        {"optimize", db, "--emit", "folded", "-o", out}}) {
    unlink(out.c_str());
    ASSERT_EQ(symlink(victim.c_str(), out.c_str()), 0);
    lchown(out.c_str(), User().uid, User().gid);
    std::vector<std::string> argv = {SyspgoBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunCmd(ViaSudo(argv));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(ReadAll(victim), "root's\n") << JoinShell(argv) << " wrote through the symlink";
    EXPECT_FALSE(S_ISLNK(Lstat(out).st_mode)) << "the link itself is replaced by the new file";
  }
}

// ---- 5. A dangling symlink as the database path ------------------------------------

TEST_F(Sudo, CollectDoesNotFollowADanglingSymlinkToCreateAFile) {
  UserDir mine;
  RootDir roots;
  std::string target = roots.File("created-by-root"), db = mine.File("run.db");
  ASSERT_EQ(symlink(target.c_str(), db.c_str()), 0);
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", db, "--", "true"}));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(db), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(target)) << "root created the symlink's target";
}

// ---- 6. Plans the user cannot read ----------------------------------------------------

TEST_F(Sudo, APlanTheUserCannotReadIsNotReadAndExistenceIsNotRevealed) {
  TempDir hidden;  // 0700, root's
  std::string data = hidden.File("data"), plan = hidden.File("app.plan");
  WriteFile(data, std::string(8192, 'd'), 0644);
  WriteTestPlan({data}, plan);
  auto there = RunCmd(ViaSudo({SyspgoBin(), "prefetch", plan, "--dry-run"}));
  auto absent = RunCmd(ViaSudo({SyspgoBin(), "prefetch", hidden.File("no.plan"), "--dry-run"}));
  EXPECT_NE(there.status, 0);
  EXPECT_EQ(there.out.find(data), std::string::npos) << "the plan was listed: " << there.out;
  EXPECT_NE(there.err.find("Permission denied"), std::string::npos) << there.err;
  EXPECT_NE(absent.err.find("Permission denied"), std::string::npos)
      << "a missing file and a present one must look the same to the user: " << absent.err;
  // plan-show (which drops to the user) the same.
  auto shown = RunCmd(ViaSudo({SyspgoBin(), "plan-show", plan}));
  EXPECT_NE(shown.status, 0);
  EXPECT_EQ(shown.out.find(data), std::string::npos) << shown.out;
}

// ---- pprof profiles the user cannot read -------------------------------------------------

TEST_F(Sudo, APprofProfileTheUserCannotReadIsNotRead) {
  UserDir mine;
  TempDir hidden;  // 0700, root's
  std::string db = RecordRun(mine), secret = hidden.File("fleet.pb.gz"), out = mine.File("out.folded");
  auto r = RunCmd({SyspgoBin(), "optimize", db, "--emit", "pprof", "-o", secret});
  ASSERT_EQ(r.status, 0) << r.err;
  chmod(secret.c_str(), 0644);  // readable, but in a directory the user cannot enter
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"optimize", "--pprof", secret, "--emit", "folded", "-o", out},
        {"merge", "--pprof", secret, "--emit", "folded", "-o", out},
        {"optimize", "--pprof", hidden.File("absent.pb.gz"), "--emit", "folded", "-o", out}}) {
    std::vector<std::string> argv = {SyspgoBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    r = RunCmd(ViaSudo(argv));
    EXPECT_NE(r.status, 0) << JoinShell(argv);
    EXPECT_NE(r.err.find("Permission denied"), std::string::npos)
        << "a missing file and a present one must look the same to the user: " << r.err;
    EXPECT_FALSE(Exists(out)) << JoinShell(argv) << " read root's profile";
  }
  // The same profile where the user can read it is read.
  std::string theirs = mine.File("fleet.pb.gz");
  ASSERT_EQ(Sh("cp " + secret + " " + theirs).status, 0);
  ASSERT_EQ(chown(theirs.c_str(), User().uid, User().gid), 0);
  r = RunCmd(ViaSudo({SyspgoBin(), "merge", theirs, "--emit", "folded", "-o", out}));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lstat(out).st_uid, User().uid);
}

// ---- 9. The command gets what `sudo -u USER` gives -------------------------------------

TEST_F(Sudo, CommandsGetTheUsersGroupsAndEnvironment) {
  UserDir mine;
  const char kProbe[] = "id -u; id -g; id -G | tr ' ' '\\n' | sort -n | tr '\\n' ' '; echo; "
                        "echo \"$HOME $USER $LOGNAME $SHELL\"";
  auto expected = RunCmd(AsUser({"sh", "-c", std::string("cd / && ") + kProbe}));
  ASSERT_EQ(expected.status, 0) << expected.err;
  // `sudo -u` keeps root's HOME on some configurations: the passwd entry is the truth.
  std::istringstream lines(expected.out);
  std::vector<std::string> want;
  for (std::string l; std::getline(lines, l);) want.push_back(l);
  ASSERT_EQ(want.size(), 4u) << expected.out;
  want[3] = User().home + " " + kUser + " " + kUser + " /bin/sh";
  ASSERT_NE(want[2].find(' '), want[2].rfind(' ')) << "the test user should have a supplementary group: " << want[2];

  std::string plan = mine.File("app.plan"), data = mine.File("data");
  WriteFile(data, std::string(8192, 'd'), 0644);
  WriteTestPlan({data}, plan);
  const std::vector<std::vector<std::string>> runs = {
      {SyspgoBin(), "collect", "-o", mine.File("run.db"), "--", "sh", "-c", kProbe},
      {SyspgoBin(), "prefetch", plan, "--", "sh", "-c", kProbe},
      {PrefetchBin(), plan, "--", "sh", "-c", kProbe},
  };
  for (const auto& argv : runs) {
    auto r = RunCmd(ViaSudo(argv));
    ASSERT_EQ(r.status, 0) << r.err;
    std::istringstream got(r.out);
    std::vector<std::string> have;
    for (std::string l; std::getline(got, l);) have.push_back(l);
    EXPECT_EQ(have, want) << argv[1];
  }
}

// ---- Attaching to a process -----------------------------------------------------------

TEST_F(Sudo, AUserMayAttachOnlyToTheirOwnProcesses) {
  UserDir mine;
  auto sleeper = [](bool as_user) {
    std::string cmd = (as_user ? JoinShell(AsUser({"sleep", "20"})) : std::string("sleep 20")) +
                      " >/dev/null 2>&1 & echo $!";
    return std::stoi(Sh(cmd).out);
  };
  int roots = sleeper(false), users = sleeper(true);
  // sudo -u forks the sleep: wait until the user's process is the sleep itself.
  std::string child = Trim(Sh("for i in $(seq 50); do c=$(pgrep -P " + std::to_string(users) +
                              " sleep); [ -n \"$c\" ] && { echo $c; exit; }; sleep 0.1; done; echo " +
                              std::to_string(users)).out);
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("a.db"), "-p", std::to_string(roots), "--duration",
                           "1"}));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("runs as uid 0"), std::string::npos) << r.err;
  r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("b.db"), "-p", child, "--duration", "1"}));
  EXPECT_EQ(r.status, 0) << r.err;
  kill(roots, SIGKILL);
  Sh("pkill -KILL -u " + std::string(kUser) + " sleep");
}

// ---- 10. pgo: every step the user's, every file theirs ---------------------------------

TEST_F(Sudo, PgoBuildsAndTrainsAsTheUserAndEverythingItWritesIsTheirs) {
  UserDir mine;
  std::string src = mine.File("app.c");
  WriteFile(src,
            "#include <stdio.h>\nstatic unsigned spin(unsigned n) { unsigned x = 1; for (unsigned i = 0; i < n; ++i) "
            "x = x * 1103515245u + 12345u; return x; }\nint main(void) { printf(\"%u\\n\", spin(50000000u)); return "
            "0; }\n",
            0644);
  chown(src.c_str(), User().uid, User().gid);
  auto r = ViaSudoIn(mine.path(), {SyspgoBin(), "pgo", "--build", "id -u > built-by; cc -O2 -g -o app app.c",
                                   "--binary", "./app", "--train", "id -u > trained-by; ./app", "--stages", "sample",
                                   "--dir", "pgo"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(ReadAll(mine.File("built-by")), std::to_string(User().uid) + "\n");
  EXPECT_EQ(ReadAll(mine.File("trained-by")), std::to_string(User().uid) + "\n");
  std::vector<std::string> not_theirs;
  for (const auto& e : std::filesystem::recursive_directory_iterator(mine.path())) {
    struct stat sb = Lstat(e.path().string());
    if (sb.st_uid != User().uid) not_theirs.push_back(e.path().string() + " (uid " + std::to_string(sb.st_uid) + ")");
  }
  EXPECT_TRUE(not_theirs.empty()) << "owned by someone else: " << JoinShell(not_theirs);
}

// ---- 15. A half-set or malformed sudo environment --------------------------------------

TEST_F(Sudo, AHalfSetOrMalformedSudoEnvironmentIsRefused) {
  UserDir mine;
  TempDir hidden;
  std::string secret = hidden.File("secret"), plan = mine.File("app.plan"), ran = mine.File("ran");
  WriteFile(secret, std::string(8192, 's'), 0600);
  WriteTestPlan({secret}, plan);
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{"SUDO_UID=" + std::to_string(User().uid)},
        {"SUDO_GID=" + std::to_string(User().gid)},
        {"SUDO_UID=" + std::to_string(User().uid) + "x", "SUDO_GID=" + std::to_string(User().gid)},
        {"SUDO_UID=+" + std::to_string(User().uid), "SUDO_GID=" + std::to_string(User().gid)},
        {"SUDO_UID= " + std::to_string(User().uid), "SUDO_GID=" + std::to_string(User().gid)}}) {
    for (const std::string& bin : {SyspgoBin(), PrefetchBin()}) {
      std::vector<std::string> argv = {"env", "-u", "SUDO_UID", "-u", "SUDO_GID"};
      argv.insert(argv.end(), env.begin(), env.end());
      argv.push_back(bin);
      if (bin == SyspgoBin()) argv.push_back("prefetch");
      argv.insert(argv.end(), {plan, "--", "touch", ran});
      auto r = RunCmd(argv);
      EXPECT_NE(r.status, 0) << JoinShell(env);
      EXPECT_NE(r.err.find("SUDO_UID"), std::string::npos) << r.err;
      EXPECT_FALSE(Exists(ran)) << JoinShell(env) << ": the command ran";
    }
  }
}

// ---- The database under sudo -------------------------------------------------------------

TEST_F(Sudo, DatabaseAndItsWalAndShmBelongToTheInvokingUser) {
  UserDir mine;
  std::string db = mine.File("run.db"), out = mine.File("stat");
  // The command (running as the user) looks at the files while the run is
  // live: -wal and -shm exist only while a connection is open.
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", db, "--", "sh", "-c",
                           "stat -c '%n %u %g %a' " + db + " " + db + "-wal " + db + "-shm > " + out}));
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(ReadAll(out));
  int seen = 0;
  for (std::string name; lines >> name;) {
    unsigned uid, gid;
    std::string mode;
    lines >> uid >> gid >> mode;
    ++seen;
    EXPECT_EQ(uid, User().uid) << name;
    EXPECT_EQ(gid, User().gid) << name;
    EXPECT_EQ(std::stoul(mode, nullptr, 8) & 022, 0u) << name << " is group- or world-writable: " << mode;
  }
  EXPECT_EQ(seen, 3) << ReadAll(out);
  auto a = RunCmd(AsUser({SyspgoBin(), "analyze", db, "files"}));
  EXPECT_EQ(a.status, 0) << a.err;
}

TEST_F(Sudo, AsRootIsRefusedForAUserAndNothingRunsOrIsCreated) {
  UserDir mine;
  std::string out = mine.File("ids"), db = mine.File("run.db");
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", db, "--as-root", "--", "sh", "-c", "id -u > " + out}));
  EXPECT_TRUE(FailedWith(r, 1, "--as-root is refused under sudo"));
  EXPECT_FALSE(Exists(out)) << "the command ran, as " << ReadAll(out);
  EXPECT_FALSE(Exists(db));
}

TEST_F(Sudo, AppendingToRootsDatabaseIsRefusedWhereTheUserCannotWriteIt) {
  UserDir mine;
  std::string db = mine.File("run.db");
  ASSERT_EQ(RunCmd({SyspgoBin(), "collect", "-o", db, "--", "true"}).status, 0);
  chmod(db.c_str(), 0644);
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", db, "--", "true"}));
  EXPECT_NE(r.status, 0) << "appended to root's database as the user";
  EXPECT_NE(r.err.find(db), std::string::npos) << r.err;
  EXPECT_EQ(Lstat(db).st_uid, 0u);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run"), 1);
}

// ---- prefetch reads only what the user can read ------------------------------------------

void WriteBlob(const std::string& p, size_t size, mode_t mode) { WriteFile(p, std::string(size, 'z'), mode); }

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
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  ASSERT_EQ(ResidentPages(p), 0u) << "could not evict " << p;
}

TEST_F(Sudo, PrefetchReadsOnlyFilesTheInvokingUserCanRead) {
  DamonPaused damon;  // it pages out what was just read (test_util.h)
  RootDir dir;
  std::string open_file = dir.File("public.bin"), secret = dir.File("secret.bin"), plan_path = dir.File("app.plan");
  WriteBlob(open_file, 64 << 10, 0644);
  WriteBlob(secret, 64 << 10, 0600);
  PlanBuilder b;
  for (const auto& p : {open_file, secret}) {
    DevIno di = StatFile(p);
    b.Add({p, di.dev, di.ino, 0, 64 << 10, p == secret ? 10u : 0u});
  }
  // A lookup inside a directory only root may search: walked as root, not as the user.
  std::string hidden_dir = dir.File("private"), hidden = hidden_dir + "/lib.so";
  ASSERT_EQ(mkdir(hidden_dir.c_str(), 0700), 0);
  WriteBlob(hidden, 4096, 0644);
  b.AddLookup(open_file, 0);
  b.AddLookup(hidden, 1);
  auto built = b.Build();
  ASSERT_EQ(built.plan.files.size(), 2u);
  ASSERT_TRUE(WritePlan(built.plan, plan_path).ok());
  chmod(plan_path.c_str(), 0644);

  Evict(open_file);
  Evict(secret);
  auto r = RunCmd(ViaSudo({SyspgoBin(), "prefetch", plan_path}));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ResidentPages(open_file), 16u);
  EXPECT_EQ(ResidentPages(secret), 0u) << "root read a file the invoking user cannot read";
  EXPECT_NE(r.err.find("skipping " + secret), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("uid " + std::to_string(User().uid)), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("skipping " + open_file), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("looked up   2 paths (1 found)"), std::string::npos) << r.out;

  // As root without sudo, both are read: the skip above was the user's rights.
  Evict(open_file);
  Evict(secret);
  r = RunCmd({SyspgoBin(), "prefetch", plan_path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ResidentPages(open_file), 16u);
  EXPECT_EQ(ResidentPages(secret), 16u);
  EXPECT_NE(r.out.find("looked up   2 paths (2 found)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace syspgo::test
