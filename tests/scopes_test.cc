//===- scopes_test.cc - collect's scopes; analyze's process filters ------===//
// A command in a cgroup of its own; every process of a cgroup made here
// (not the collector's children), including one that joins while
// recording; a podman container (the runtime's child); every process of
// the host; under sudo the refusal of the scopes that show what is not the
// user's; each process row's cgroup; and the analyses read for some
// processes alone (--pid, --comm, --cgroup, --container).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/util.h"
#include "tests/sudo_fixture.h"
#include "tests/test_util.h"

extern char** environ;

namespace syspgo::test {
namespace {

std::string Slurp(const std::string& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The memory (v1) cgroup of this process, from /proc/self/cgroup.
std::string OwnMemoryCgroup() {
  std::istringstream is(Slurp("/proc/self/cgroup"));
  for (std::string line; std::getline(is, line);)
    if (auto at = line.find(":memory:"); at != std::string::npos) return line.substr(at + 8);
  return "";
}

// A fresh v1 memory cgroup below this process's, removed at the end.
struct TestCgroup {
  std::string dir;
  explicit TestCgroup(const std::string& name) {
    std::string own = OwnMemoryCgroup();
    dir = "/sys/fs/cgroup/memory" + (own == "/" ? "" : own) + "/" + name + "-" + std::to_string(getpid());
    mkdir(dir.c_str(), 0755);
  }
  void Add(pid_t pid) const { std::ofstream(dir + "/cgroup.procs") << pid << "\n"; }
  ~TestCgroup() { rmdir(dir.c_str()); }
};

pid_t Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> a;
  for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  pid_t pid = -1;
  posix_spawnp(&pid, a[0], nullptr, nullptr, a.data(), environ);
  return pid;
}

int WaitExit(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// A shell that waits for `go`, then reads `file` every 50 ms until `stop`.
std::vector<std::string> Reader(const std::string& go, const std::string& stop, const std::string& file) {
  return {"sh", "-c",
          "while [ ! -e " + go + " ]; do sleep 0.02; done; while [ ! -e " + stop + " ]; do cat " + file +
              " >/dev/null; sleep 0.05; done"};
}

// Waits (up to 60 s) until the recording holds reads of each of `files`
// (by the readers' `cat` children, whose pids the test does not know).
bool WaitReads(const std::string& db, const std::vector<std::string>& files) {
  for (int i = 0; i < 1200; ++i) {
    bool all = true;
    {
      Db d = OpenDb(db);
      for (auto& f : files)
        all = all && QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE nr = 0 AND ino = " +
                                     std::to_string(StatFile(f).ino)) > 0;
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string MakeFile(TempDir& dir, const std::string& name) {
  std::string p = dir.File(name);
  std::ofstream(p) << std::string(8192, 'x');
  return p;
}

TEST(Scopes, NewCgroupRunsTheCommandInAFreshCgroupRemovedAfter) {
  TempDir dir;
  std::string db = dir.File("run.db"), out = dir.File("cgroup");
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--probes", "proc", "--new-cgroup", "--", "sh", "-c",
                   "cat /proc/self/cgroup > " + out});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = Slurp(out), mine = OwnMemoryCgroup();
  auto at = text.find(":memory:");
  ASSERT_NE(at, std::string::npos) << text;
  std::string memory = text.substr(at + 8, text.find('\n', at) - at - 8);
  EXPECT_EQ(memory.rfind((mine == "/" ? "" : mine) + "/syspgo-", 0), 0u) << memory;
  struct stat sb {};
  EXPECT_NE(stat(("/sys/fs/cgroup/memory" + memory).c_str(), &sb), 0) << memory << " still exists";
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_probe WHERE probe_group = 'proc' AND detail LIKE '%new cgroup "
                        "/sys/fs/cgroup/memory" + memory + "%'"),
            1);
}

TEST(Scopes, CgroupRecordsItsProcessesAndThoseJoiningButNotOthers) {
  TempDir dir;
  TestCgroup cg("syspgo-scopes-test");
  std::string db = dir.File("run.db"), go = dir.File("go"), stop = dir.File("stop");
  std::string a = MakeFile(dir, "a"), b = MakeFile(dir, "b"), c = MakeFile(dir, "c"), j = MakeFile(dir, "j");
  pid_t pa = Spawn(Reader(go, stop, a)), pb = Spawn(Reader(go, stop, b)), outside = Spawn(Reader(go, stop, c));
  cg.Add(pa);
  cg.Add(pb);
  pid_t collector = Spawn({SyspgoBin(), "collect", "-o", db, "--probes", "proc,fileio", "--detail", "full",
                           "--cgroup", cg.dir, "--duration", "120"});
  bool attached = WaitAttached(db);
  pid_t joiner = Spawn(Reader(go, stop, j));
  cg.Add(joiner);  // after the start: found at a drain tick
  std::ofstream(go) << "go";
  bool read = attached && WaitReads(db, {a, b, j});
  std::ofstream(stop) << "stop";
  for (pid_t p : {pa, pb, outside, joiner}) WaitExit(p);
  kill(collector, SIGINT);
  EXPECT_EQ(WaitExit(collector), 0);
  ASSERT_TRUE(attached);
  ASSERT_TRUE(read);
  Db d = OpenDb(db);
  for (pid_t p : {pa, pb, joiner})
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE pid = " + std::to_string(p)), 1) << p;
  for (auto& [f, want] : std::vector<std::pair<std::string, bool>>{{a, true}, {b, true}, {j, true}, {c, false}})
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE nr = 0 AND ino = " +
                              std::to_string(StatFile(f).ino)) > 0,
              want)
        << f;
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE pid = " + std::to_string(outside)), 0);
  EXPECT_EQ(QueryInt(d, "SELECT attached FROM run"), 1);
}

// A root filesystem for a container: sh, cat and sleep with the libraries
// ldd lists, and data/known, the file the container reads. ldd runs once
// per binary: given several it heads each list with "path:", which is no
// library.
std::string MakeRootfs(TempDir& dir) {
  std::string root = dir.File("rootfs");
  auto r = Sh("set -e; R=" + root + "; mkdir -p $R/bin $R/data $R/proc $R/sys $R/dev $R/etc; "
              "for b in sh cat sleep; do cp -L \"$(command -v $b)\" $R/bin/; done; "
              "for l in $(for b in sh cat sleep; do ldd $R/bin/$b; done | grep -o '/[^ ]*' | sort -u); do "
              "mkdir -p $R$(dirname $l); cp -L $l $R$l; done; head -c 8192 /dev/zero | tr '\\0' k > $R/data/known");
  EXPECT_EQ(r.status, 0) << r.err;
  return root;
}

// A podman container on this machine kind: runc (crun refuses hybrid
// cgroups), no ulimits raised (not permitted here), no network, a local
// root filesystem. Root's, or with `as` (AsUser's prefix) the test user's
// (rootless: `dir` and `rootfs` must be theirs). Running, or initialized
// (`podman init`: the runtime's init process waits in the container's
// cgroup for `podman start`). Removed at the end.
enum class Start { kRunning, kInitialized };
struct Container {
  std::string name = "syspgo-test-" + std::to_string(getpid());
  std::string id;
  std::vector<std::string> podman;  // how podman is run, as whom, with which containers.conf
  Container(TempDir& dir, const std::string& rootfs, const std::string& script, std::vector<std::string> as = {},
            Start start = Start::kRunning)
      : podman(std::move(as)) {
    std::string conf = dir.File("containers.conf");
    std::ofstream(conf) << "[containers]\ndefault_ulimits = []\n";
    setenv("CONTAINERS_CONF", conf.c_str(), 1);  // for root's podman, here and in the collector
    podman.insert(podman.end(), {"env", "CONTAINERS_CONF=" + conf, "podman"});
    Podman({"rm", "-f", "-t", "0", name});  // a leftover of a killed run with this pid
    // --rm and --timeout: a test killed before its teardown leaves no
    // container spinning for long.
    std::vector<std::string> how = {"run", "-d", "--rm"};
    if (start == Start::kInitialized) how = {"create"};
    how.insert(how.end(), {"--timeout", "600", "--name", name, "--runtime", "runc", "--network", "none", "--rootfs",
                           rootfs, "/bin/sh", "-c", script});
    auto r = Podman(how);
    EXPECT_EQ(r.status, 0) << "podman " << how[0] << " (install podman and runc: scripts/test-setup.sh): " << r.err;
    id = Trim(r.out);
    if (start == Start::kInitialized) {
      EXPECT_EQ(Podman({"init", name}).status, 0);
    }
  }
  CmdResult Podman(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = podman;
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCmd(argv);
  }
  ~Container() { Podman({"rm", "-f", "-t", "0", name}); }
};

TEST(Scopes, ContainerRecordsTheContainersProcessesButNotOthers) {
  TempDir dir;
  std::string rootfs = MakeRootfs(dir), db = dir.File("run.db"), stop = dir.File("stop"), c = MakeFile(dir, "c");
  std::string known = rootfs + "/data/known";
  ASSERT_EQ(access(known.c_str(), R_OK), 0) << known;  // else WaitReads scans the growing file_io for nothing
  // Busy in the shell itself, so that its CPU is sampled too, but one cat at
  // a time between spins: a cat per loop turn at full detail would fill the
  // recording with hundreds of megabytes that every poll of it scans.
  Container ctr(dir, rootfs,
                "while [ ! -e /data/go ]; do sleep 0.02; done; while [ ! -e /data/stop ]; do cat /data/known "
                ">/dev/null; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; done");
  ASSERT_EQ(ctr.id.size(), 64u) << ctr.id;
  pid_t outside = Spawn(Reader(rootfs + "/data/go", stop, c));
  pid_t collector = Spawn({SyspgoBin(), "collect", "-o", db, "--probes", "proc,fileio,cpu", "--detail", "full",
                           "--container", ctr.name, "--duration", "120"});
  bool attached = WaitAttached(db);
  std::ofstream(rootfs + "/data/go") << "go";
  bool read = attached && WaitReads(db, {known});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a few samples more; counts are not asserted
  std::ofstream(stop) << "stop";
  std::ofstream(rootfs + "/data/stop") << "stop";
  WaitExit(outside);
  kill(collector, SIGINT);
  EXPECT_EQ(WaitExit(collector), 0);
  ASSERT_TRUE(read);
  Db d = OpenDb(db);
  std::string in_ctr = "(SELECT pid FROM process WHERE container = '" + ctr.id + "')";
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM process WHERE container = '" + ctr.id + "' AND cgroup LIKE "
                        "'%libpod-" + ctr.id + "%'"), 0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE container <> '" + ctr.id + "'"), 0)
      << Sh("sqlite3 " + db + " \"SELECT pid, ppid, comm, exe, start_ts, exit_ts, cgroup, container FROM process\"").out;
  auto ino = std::to_string(StatFile(known).ino);
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE nr = 0 AND ino = " + ino + " AND pid IN " + in_ctr), 0);
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM cpu_sample WHERE pid IN " + in_ctr), 0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE pid = " + std::to_string(outside)), 0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE ino = " + std::to_string(StatFile(c).ino)), 0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_probe WHERE detail LIKE '%podman container " + ctr.name +
                        "%--container%'"), 1);
  auto files = RunCmd({SyspgoBin(), "analyze", db, "files", "--container", ctr.id.substr(0, 12)});
  EXPECT_EQ(files.status, 0) << files.err;
  EXPECT_NE(files.out.find("/data/known"), std::string::npos) << files.out;
}

// A container recorded from its first exec: initialized, recorded, then
// started. Its processes name their files as the container sees them
// (/data/known); the recording names them as the host does (ROOTFS/data/known),
// for its files opened and exec'd alike, so that a plan of its start reads
// the root filesystem's files and not the host's files of the same names.
TEST(Scopes, ContainerStartIsRecordedWithTheHostsPathsOfItsFiles) {
  TempDir dir;
  std::string rootfs = MakeRootfs(dir), db = dir.File("run.db"), plan = dir.File("start.plan");
  std::string known = rootfs + "/data/known", cat = rootfs + "/bin/cat";
  Container ctr(dir, rootfs, "cat /data/known >/dev/null", {}, Start::kInitialized);
  ASSERT_EQ(ctr.id.size(), 64u) << ctr.id;
  pid_t collector = Spawn({SyspgoBin(), "collect", "-o", db, "--probes", "proc,fileio,faults", "--container",
                           ctr.name, "--duration", "120"});
  bool attached = WaitAttached(db);
  auto started = ctr.Podman({"start", "--attach", ctr.name});
  kill(collector, SIGINT);
  EXPECT_EQ(WaitExit(collector), 0);
  ASSERT_TRUE(attached);
  ASSERT_EQ(started.status, 0) << started.err;
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM exec WHERE filename = '/bin/sh' AND pid IN (SELECT pid FROM process "
                        "WHERE container = '" + ctr.id + "')"), 1);
  using Rows = std::vector<std::string>;
  EXPECT_EQ(QueryRows(d, "SELECT path FROM file WHERE ino = " + std::to_string(StatFile(known).ino)), Rows{known});
  EXPECT_EQ(QueryRows(d, "SELECT path, ino FROM exec_file WHERE filename = '/bin/cat'"),
            Rows{cat + "\t" + std::to_string(StatFile(cat).ino)});
  auto o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "plan", "-o", plan});
  ASSERT_EQ(o.status, 0) << o.err;
  auto shown = RunCmd({SyspgoBin(), "plan-show", plan, "--json"});  // whole paths
  EXPECT_NE(shown.out.find(cat), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find(known), std::string::npos) << shown.out;
}

TEST(Scopes, ContainerThatNoRuntimeKnowsIsAnError) {
  TempDir dir;
  auto r = RunCmd({SyspgoBin(), "collect", "-o", dir.File("r.db"), "--container", "syspgo-no-such-container"});
  EXPECT_TRUE(FailedWith(r, 1, "--container syspgo-no-such-container: no runtime knows")) << r.err;
}

// How long a collector may take to stop after SIGINT before the test kills
// it: its stop is bounded (it detaches its programs, then writes what its
// buffers held), so this only keeps a broken stop from hanging the suite;
// generous, for a loaded machine.
constexpr auto kStopLimit = std::chrono::seconds(180);

TEST(Scopes, AllRecordsAProcessSyspgoDidNotStart) {
  TempDir dir;
  std::string db = dir.File("run.db"), go = dir.File("go"), stop = dir.File("stop"), f = MakeFile(dir, "f");
  pid_t p = Spawn(Reader(go, stop, f));
  OwnedChild collector({SyspgoBin(), "collect", "-o", db, "--probes", "proc,fileio", "--detail", "full", "--all",
                        "--duration", "120"});
  bool attached = WaitAttached(db);
  std::ofstream(go) << "go";
  bool read = attached && WaitReads(db, {f});
  std::ofstream(stop) << "stop";
  WaitExit(p);
  EXPECT_EQ(collector.Stop(SIGINT, kStopLimit), 0);
  ASSERT_TRUE(read);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE pid = " + std::to_string(p)), 1);
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE nr = 0 AND ino = " + std::to_string(StatFile(f).ino)),
            0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_probe WHERE detail LIKE '%whole host%'"), 1);
}

// --all while another process floods the host with reads (one syscall a
// byte, of a sparse file that outlasts the test), and goes on flooding
// while the collector stops. The ring buffers are large, as the
// pagecache_cgroups test's, so they hold much when SIGINT comes. The
// collector must detach its programs, write what its buffers held and
// exit with the run complete, rather than drain the flood for ever.
TEST(Scopes, AllStopsAfterSigintWhileTheHostKeepsReading) {
  TempDir dir;
  std::string db = dir.File("run.db"), f = dir.File("sparse"), err = dir.File("collect.err");
  std::ofstream{f};
  ASSERT_EQ(truncate(f.c_str(), int64_t{64} << 30), 0);
  // Two floods, so that events come faster than the writer stores them.
  OwnedChild flood({"dd", "if=" + f, "of=/dev/null", "bs=1", "status=none"});
  OwnedChild flood2({"dd", "if=" + f, "of=/dev/null", "bs=1", "status=none"});
  OwnedChild collector({SyspgoBin(), "collect", "-o", db, "--probes", "proc,fileio", "--detail", "full", "--all",
                        "--ringbuf-mb", "64", "--duration", "600"},
                       err);
  ASSERT_TRUE(WaitAttached(db)) << ReadAll(err);
  bool read = WaitReads(db, {f});
  std::this_thread::sleep_for(std::chrono::seconds(5));  // a backlog forms in the ring buffers
  int status = collector.Stop(SIGINT, kStopLimit);
  ASSERT_NE(status, -1) << "the collector did not stop within " << kStopLimit.count() << " s of SIGINT; killed\n"
                        << ReadAll(err);
  EXPECT_EQ(status, 0) << ReadAll(err);
  EXPECT_EQ(flood.WaitExit(std::chrono::seconds(0)), -1);  // still flooding when the collector was gone
  EXPECT_EQ(flood2.WaitExit(std::chrono::seconds(0)), -1);
  ASSERT_TRUE(read);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, "SELECT status || ' ' || exit_reason FROM run"),
            std::vector<std::string>{"complete interrupted"});
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE nr = 0 AND ino = " + std::to_string(StatFile(f).ino)),
            0);
}

TEST(Scopes, ScopesNeedOneTargetAndNewCgroupACommand) {
  TempDir dir;
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", dir.File("r.db"), "--all", "--", "true"}), 2,
                         "not several"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", dir.File("r.db"), "--new-cgroup", "--all"}), 2,
                         "--new-cgroup needs a command"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", dir.File("r.db"), "--cgroup", dir.path()}), 1,
                         "not a cgroup directory"));
}

TEST_F(Sudo, AllAndAForeignCgroupAreRefusedUnderSudo) {
  UserDir mine;
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("a.db"), "--all", "--duration", "1"}));
  EXPECT_TRUE(FailedWith(r, 1, "needs real root")) << r.err;
  // The collector's own cgroup holds root's processes (this test's).
  TestCgroup cg("syspgo-scopes-sudo");
  pid_t p = Spawn({"sleep", "30"});
  cg.Add(p);
  r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("b.db"), "--cgroup", cg.dir, "--duration", "1"}));
  kill(p, SIGKILL);
  WaitExit(p);
  EXPECT_TRUE(FailedWith(r, 1, "needs real root")) << r.err;
}

// A container is recorded under sudo by the rule a cgroup is. Root's is
// not one the user's runtime knows, and is refused with what to do. The
// user's own (rootless) is found, and refused as its cgroup holds a process
// that is not all theirs: on this machine kind a rootless container on v1
// cgroups stays in its caller's (the test's, root's), and its init, root in
// its user namespace, holds capabilities.
TEST_F(Sudo, AContainerNotAllTheUsersIsRefusedUnderSudo) {
  UserDir mine;
  std::string rootfs = MakeRootfs(mine);
  Container roots(mine, rootfs, "sleep 600");
  ASSERT_EQ(roots.id.size(), 64u) << roots.id;
  for (const std::string& name : {roots.name, roots.id.substr(0, 12)}) {
    auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("r.db"), "--container", name, "--duration", "1"}));
    EXPECT_TRUE(FailedWith(r, 1, "--container " + name + ": no runtime knows")) << r.err;
    EXPECT_NE(r.err.find("Under sudo only your own containers are looked up, so one of root's or of another user's "
                         "is not found: under sudo it is refused; it needs real root. Run syspgo as root itself, "
                         "without sudo, to record it, or record a command of your own: syspgo collect -o DB -- "
                         "COMMAND."),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(Exists(mine.File("r.db")));
  }

  UserDir theirs;
  std::string own_rootfs = MakeRootfs(theirs);
  ASSERT_EQ(Sh("chown -R " + std::string(kUser) + ": " + own_rootfs).status, 0);
  Container own(theirs, own_rootfs, "sleep 600", AsUser({}));
  ASSERT_EQ(own.id.size(), 64u) << own.id;
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("o.db"), "--container", own.id.substr(0, 12),
                           "--duration", "1"}));
  EXPECT_TRUE(FailedWith(r, 1, "--container: podman container " + own.id.substr(0, 12) + " (" + own.id.substr(0, 12) +
                                   "), cgroup /sys/fs/cgroup/memory"))
      << r.err;
  EXPECT_NE(r.err.find("holds a process that is not only yours (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("needs real root. Run syspgo as root itself"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(mine.File("o.db")));
}

// Two programs of one command, each reading its own file: every process row
// has the collector's cgroup (the command runs in it), and each analysis
// read with --comm, --pid or --cgroup answers for those processes alone.
TEST(TaskFilter, AnalysesReadOnlyTheChosenProcesses) {
  TempDir dir;
  std::string db = dir.File("run.db"), a = MakeFile(dir, "a_file"), b = MakeFile(dir, "b_file");
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--detail", "full", "--", "sh", "-c",
                   "cat " + a + " >/dev/null; head -c 100 " + b + " >/dev/null"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string own = OwnMemoryCgroup();
  {
    Db d = OpenDb(db);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE cgroup <> '" + own + "'"), 0);
    EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM process"), 2);
  }
  auto files = [&](std::vector<std::string> filter) {
    std::vector<std::string> argv = {SyspgoBin(), "analyze", db, "files"};
    argv.insert(argv.end(), filter.begin(), filter.end());
    return RunCmd(argv);
  };
  auto cat = files({"--comm", "cat"}), head = files({"--comm", "head"});
  ASSERT_EQ(cat.status, 0) << cat.err;
  ASSERT_EQ(head.status, 0) << head.err;
  // A file's row: its path then spaces (the headline's command names both).
  EXPECT_NE(cat.out.find("a_file  "), std::string::npos) << cat.out;
  EXPECT_EQ(cat.out.find("b_file  "), std::string::npos) << cat.out;
  EXPECT_NE(head.out.find("b_file  "), std::string::npos) << head.out;
  EXPECT_EQ(head.out.find("a_file  "), std::string::npos) << head.out;
  EXPECT_NE(cat.out.find("only: comm cat (1 of "), std::string::npos) << cat.out;
  auto all = files({"--cgroup", "/sys/fs/cgroup/memory" + (own == "/" ? "" : own)});
  EXPECT_NE(all.out.find("a_file"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("b_file"), std::string::npos) << all.out;
  EXPECT_TRUE(FailedWith(files({"--pid", "1"}), 1, "has no process of pid 1"));
  EXPECT_TRUE(FailedWith(files({"--cgroup", "/syspgo-no-such"}), 1, "has no process of cgroup /syspgo-no-such"));
  for (std::string what : {"stalls", "pagecache", "io", "access"}) {
    auto out = RunCmd({SyspgoBin(), "analyze", db, what, "--comm", "cat"});
    EXPECT_EQ(out.status, 0) << what << ": " << out.err;
  }
  auto report = RunCmd({SyspgoBin(), "report", db, "-o", dir.File("r.html"), "--comm", "head"});
  EXPECT_EQ(report.status, 0) << report.err;
  auto exported = RunCmd({SyspgoBin(), "export", db, "-o", dir.File("t.json"), "--comm", "head"});
  EXPECT_EQ(exported.status, 0) << exported.err;
  EXPECT_NE(ReadAll(dir.File("t.json")).find("b_file"), std::string::npos);
}

}  // namespace
}  // namespace syspgo::test
