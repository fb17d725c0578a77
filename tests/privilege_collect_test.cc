//===- privilege_collect_test.cc - what collect does for a sudo user ------===//
// The attacks on `collect` by a sudo user, each through real sudo as the
// real unprivileged user syspgo-test (tests/sudo_fixture.h): a command run
// as root with --as-root, setuid and setgid programs in the recorded tree,
// -p on a tree that holds them, and ring buffers past the memory cap. Each
// test asserts the attempt is refused with an error that says why, or
// harmless; where it can, it shows the same query finding what it looks
// for in a run that root records for itself.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/util.h"
#include "tests/sudo_fixture.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// ---- 1. --as-root ------------------------------------------------------------------------

TEST_F(Sudo, AsRootIsRefusedUnderSudoAndKeptForRoot) {
  UserDir mine;
  std::string ids = mine.File("ids"), shell = mine.File("rootshell"), db = mine.File("r.db");
  std::string attack = "id -u > " + ids + "; head -c 60 /etc/shadow; cp /bin/sh " + shell + " && chmod 4755 " + shell;
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", db, "--as-root", "--", "/bin/sh", "-c", attack}));
  EXPECT_TRUE(FailedWith(r, 1, "--as-root is refused under sudo"));
  EXPECT_NE(r.err.find("uid " + std::to_string(User().uid)), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("root:"), std::string::npos) << "/etc/shadow was shown: " << r.out;
  EXPECT_FALSE(Exists(ids)) << "the command ran";
  EXPECT_FALSE(Exists(shell)) << "a setuid shell was left behind";

  // Root itself keeps it: without sudo, and through sudo by root (SUDO_UID=0).
  TempDir roots;
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{"env", "-u", "SUDO_UID", "-u", "SUDO_GID"},
        std::vector<std::string>{"env", "SUDO_UID=0", "SUDO_GID=0"}}) {
    std::string out = roots.File("ids");
    std::vector<std::string> argv = env;
    argv.insert(argv.end(), {SyspgoBin(), "collect", "--probes", "proc", "-o", roots.File("root.db"), "--as-root",
                             "--", "sh", "-c", "id -u > " + out});
    auto ok = RunCmd(argv);
    EXPECT_EQ(ok.status, 0) << JoinShell(env) << ": " << ok.err;
    EXPECT_EQ(ReadAll(out), "0\n") << JoinShell(env);
  }
}

// ---- 2. Setuid and setgid programs in the recorded tree ----------------------------------

// What a run holds of the programs a setuid or setgid exec started (sudo,
// passwd, newgrp and the shell it runs) and of the files only they open.
struct PrivilegedTraces {
  int64_t execs, processes, threads, opens, files, mappings, children;
};

PrivilegedTraces TracesIn(const std::string& db) {
  Db d = OpenDb(db);
  const std::string progs = "('/usr/bin/passwd', '/usr/bin/sudo', '/usr/bin/newgrp')";
  const std::string comms = "('passwd', 'sudo', 'newgrp')";
  const std::string secret_path =
      "(path LIKE '/etc/shadow%' OR path LIKE '/etc/sudoers%' OR path LIKE '/etc/pam.d/%' OR path LIKE '/etc/gshadow%')";
  return {QueryInt(d, "SELECT COUNT(*) FROM exec WHERE filename IN " + progs),
          QueryInt(d, "SELECT COUNT(*) FROM process WHERE comm IN " + comms + " OR exe IN " + progs),
          QueryInt(d, "SELECT COUNT(*) FROM thread WHERE comm IN " + comms),
          QueryInt(d, "SELECT COUNT(*) FROM file_open WHERE " + secret_path),
          QueryInt(d, "SELECT COUNT(*) FROM file WHERE " + secret_path),
          QueryInt(d, "SELECT COUNT(*) FROM mapping WHERE path IN " + progs + " OR path LIKE '%libpam%'"),
          QueryInt(d, "SELECT COUNT(*) FROM exec WHERE filename = '/bin/echo' AND argv LIKE '%left-out-child%'")};
}

TEST_F(Sudo, ProcessesThatGainPrivilegeAtAnExecAreLeftOut) {
  UserDir mine;
  std::string db = mine.File("u.db"), summary = mine.File("u.json");
  // passwd and sudo are setuid root; newgrp too, and the shell it runs
  // (with the user's uid but another gid) starts a child of its own.
  std::string script =
      "/usr/bin/passwd -S; sudo -n -l; echo '/bin/echo left-out-child' | newgrp syspgo-test-extra; "
      "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; /bin/true mine; true";
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "--probes", "proc,fileio,cpu", "-o", db, "--json", summary, "--",
                           "sh", "-c", script}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("left-out-child"), std::string::npos) << "newgrp's shell did not run its child: " << r.out;
  PrivilegedTraces t = TracesIn(db);
  EXPECT_EQ(t.execs, 0) << "exec rows of setuid programs";
  EXPECT_EQ(t.processes, 0) << "process rows of setuid programs";
  EXPECT_EQ(t.threads, 0) << "thread rows of setuid programs";
  EXPECT_EQ(t.opens, 0) << "their opens of root's files";
  EXPECT_EQ(t.files, 0) << "root's files they opened";
  EXPECT_EQ(t.mappings, 0) << "their memory maps";
  EXPECT_EQ(t.children, 0) << "a child of a left-out process";
  // What the user ran themselves is recorded as ever.
  Db d = OpenDb(db);
  EXPECT_GE(QueryInt(d, "SELECT COUNT(*) FROM exec WHERE filename = '/bin/true' AND argv = '/bin/true mine'"), 1);
  // passwd, sudo and newgrp: counted, in the summary and in the run.
  EXPECT_GE(ReadJson(summary).value("processes_left_out", 0), 3) << ReadAll(summary);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_probe WHERE probe_group = 'proc' AND detail LIKE "
                        "'%processes left out: they had rights the invoking user lacks%'"),
            1)
      << JoinShell(QueryRows(d, "SELECT detail FROM run_probe WHERE probe_group = 'proc'"));
  EXPECT_NE(r.err.find("processes left out"), std::string::npos) << r.err;

  // The same queries find them in a run root records for itself (nothing
  // is left out there): they look where the rows would be.
  TempDir roots;
  std::string root_db = roots.File("root.db");
  auto rr = RunCmd({"env", "-u", "SUDO_UID", "-u", "SUDO_GID", SyspgoBin(), "collect", "--probes", "proc,fileio,cpu",
                    "-o", root_db, "--", "sh", "-c", "/usr/bin/passwd -S; sudo -n -l; true"});
  ASSERT_EQ(rr.status, 0) << rr.err;
  PrivilegedTraces seen = TracesIn(root_db);
  EXPECT_GE(seen.execs, 2);
  EXPECT_GE(seen.processes, 2);
  EXPECT_GE(seen.opens, 1);
}

// ---- 3. -p on a tree with setuid and setgid processes ------------------------------------

// Kills the listed processes (as root) when it goes.
struct Killer {
  std::vector<int> pids;
  ~Killer() {
    for (int p : pids)
      if (p > 0) kill(p, SIGKILL);
  }
};

// The pid written to `file` by a process started in the background (up to 10 s).
int WaitPid(const std::string& file) {
  for (int i = 0; i < 100; ++i) {
    std::string s = Trim(ReadAll(file));
    if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos) return std::stoi(s);
    usleep(100000);
  }
  return 0;
}

// The pid of a child of `parent` that runs `comm` (up to 10 s), 0 if none.
int ChildRunning(int parent, const std::string& comm) {
  for (int i = 0; i < 100; ++i) {
    std::string s = Sh("pgrep -P " + std::to_string(parent) + " -x " + comm + " | head -n 1").out;
    if (!Trim(s).empty()) return std::stoi(s);
    usleep(100000);
  }
  return 0;
}

TEST_F(Sudo, AttachingLeavesOutPrivilegedProcessesOfTheTreeAndRefusesAPrivilegedTop) {
  UserDir mine;
  // The user's shell, with a setuid child (passwd, waiting on the pipe), a
  // setgid one (ssh-agent, group _ssh) and a child of their own.
  std::string top_file = mine.File("top.pid"), sock = mine.File("agent.sock");
  std::string tree = "echo $$ > " + top_file + "; sleep 30 | /usr/bin/passwd >/dev/null 2>&1 & /usr/bin/ssh-agent -D -a " +
                     sock + " >/dev/null 2>&1 & sleep 30 & wait";
  Sh(JoinShell(AsUser({"sh", "-c", tree})) + " >/dev/null 2>&1 &");
  Killer killer;
  int top = WaitPid(top_file);
  ASSERT_GT(top, 0);
  killer.pids.push_back(top);
  int passwd = ChildRunning(top, "passwd"), agent = ChildRunning(top, "ssh-agent"), sleeper = ChildRunning(top, "sleep");
  killer.pids.insert(killer.pids.end(), {passwd, agent, sleeper});
  ASSERT_GT(passwd, 0);
  ASSERT_GT(agent, 0);
  ASSERT_GT(sleeper, 0);
  // passwd has set its uids by now; the agent holds its group from the exec.
  ASSERT_NE(Sh("grep '^Uid:' /proc/" + std::to_string(passwd) + "/status").out.find("\t0\t"), std::string::npos);

  std::string db = mine.File("p.db"), summary = mine.File("p.json");
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "--probes", "proc,fileio,cpu", "-o", db, "--json", summary, "-p",
                           std::to_string(top), "--duration", "1"}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadJson(summary).value("processes_left_out", 0), 2) << ReadAll(summary);
  Db d = OpenDb(db);
  auto rows_of = [&](int pid) {
    std::string p = std::to_string(pid);
    return QueryInt(d, "SELECT (SELECT COUNT(*) FROM process WHERE pid = " + p +
                           ") + (SELECT COUNT(*) FROM thread WHERE pid = " + p +
                           ") + (SELECT COUNT(*) FROM mapping WHERE pid = " + p +
                           ") + (SELECT COUNT(*) FROM file_open WHERE pid = " + p + ")");
  };
  EXPECT_EQ(rows_of(passwd), 0) << "the setuid child was recorded";
  EXPECT_EQ(rows_of(agent), 0) << "the setgid child was recorded";
  EXPECT_GE(rows_of(top), 1) << "the user's own shell is missing";
  EXPECT_GE(rows_of(sleeper), 1) << "the user's own child is missing";

  // Named as the top pid, each is refused, saying why.
  r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("a.db"), "-p", std::to_string(passwd), "--duration",
                      "1"}));
  EXPECT_TRUE(FailedWith(r, 1, "runs as uid 0, not as uid " + std::to_string(User().uid)));
  r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("b.db"), "-p", std::to_string(agent), "--duration",
                      "1"}));
  EXPECT_TRUE(FailedWith(r, 1, "runs as gid"));
}

TEST_F(Sudo, AttachingToANonDumpableProcessOfTheUserIsRefused) {
  UserDir mine;
  // The user's own process that asked not to be dumpable (as ssh-agent and
  // gpg-agent do): the user could not read its memory either.
  std::string pid_file = mine.File("nd.pid");
  std::string py = "import ctypes, os, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); "
                   "open('" + pid_file + "', 'w').write(str(os.getpid())); time.sleep(30)";
  Sh(JoinShell(AsUser({"/usr/bin/python3", "-c", py})) + " >/dev/null 2>&1 &");
  Killer killer;
  int pid = WaitPid(pid_file);
  ASSERT_GT(pid, 0);
  killer.pids.push_back(pid);
  struct stat sb {};
  ASSERT_EQ(stat(("/proc/" + std::to_string(pid) + "/stat").c_str(), &sb), 0);
  ASSERT_EQ(sb.st_uid, 0u) << "the process is still dumpable";
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("n.db"), "-p", std::to_string(pid), "--duration",
                           "1"}));
  EXPECT_TRUE(FailedWith(r, 1, "is not dumpable"));
}

// ---- 6. Ring buffers and the memory budget -----------------------------------------------

TEST_F(Sudo, RingBuffersAndTheBudgetStayUnderTheCapForASudoUser) {
  UserDir mine;
  std::string db = mine.File("m.db");
  for (const std::vector<std::string>& ask :
       {std::vector<std::string>{"--ringbuf-mb", "1024"}, {"--ringbuf-mb", "128"}, {"--memory-mb", "257"}}) {
    std::vector<std::string> argv = {SyspgoBin(), "collect", "--probes", "proc,fileio", "-o", db};
    argv.insert(argv.end(), ask.begin(), ask.end());
    argv.insert(argv.end(), {"--", "sleep", "6"});
    auto r = RunCmd(ViaSudo(argv));
    EXPECT_TRUE(FailedWith(r, 1, "under sudo the collector may use at most 256 MiB")) << JoinShell(ask);
  }
  EXPECT_FALSE(Exists(db)) << "a refused run left a database";
  // Up to the cap is the user's to choose.
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "--probes", "proc", "--memory-mb", "256", "-o", db, "--", "true"}));
  EXPECT_EQ(r.status, 0) << r.err;
  // Root without sudo keeps --memory-mb's own limit.
  TempDir roots;
  r = RunCmd({"env", "-u", "SUDO_UID", "-u", "SUDO_GID", SyspgoBin(), "collect", "--probes", "proc", "--memory-mb",
              "512", "-o", roots.File("root.db"), "--", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("memory budget 512 MiB"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace syspgo::test
