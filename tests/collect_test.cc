//===- collect_test.cc - `syspgo collect` on the real kernel -------------===//
// Runs the built syspgo on real workloads and checks what reached the
// profile database against the file system (stat) and the workloads' own
// arithmetic.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

extern char** environ;

namespace syspgo::test {
namespace {

constexpr int64_t kMiB = 1 << 20;
const char kWriteNrs[] = "(1, 18, 20, 296, 328)";
const char kReadNrs[] = "(0, 17, 19, 295, 327)";

std::string Q(const std::string& s) { return "'" + s + "'"; }

TEST(Collect, DdWriteFsyncReadBack) {
  TempDir dir;
  std::string f = dir.File("data.bin"), db = dir.File("run.db");
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--", "sh", "-c",
                "dd if=/dev/zero of=" + f + " bs=1M count=10 conv=fsync 2>/dev/null && dd if=" + f +
                    " of=/dev/null bs=1M 2>/dev/null"});
  ASSERT_EQ(r.status, 0) << r.err;
  // What collect says fits 120 columns (the temporary directory's path too).
  std::istringstream said(r.err);
  for (std::string l; std::getline(said, l);) EXPECT_LE(l.size(), 120u) << l;
  DevIno di = StatFile(f);
  Db d = OpenDb(db);
  std::string where = " WHERE run_id = 1 AND dev = " + std::to_string(di.dev) + " AND ino = " + std::to_string(di.ino);
  EXPECT_EQ(QueryInt(d, "SELECT SUM(ret) FROM file_io" + where + " AND nr IN " + kWriteNrs), 10 * kMiB);
  EXPECT_EQ(QueryInt(d, "SELECT SUM(ret) FROM file_io" + where + " AND nr IN " + kReadNrs), 10 * kMiB);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io" + where + " AND nr = 74 AND ret = 0"), 1);
  EXPECT_GT(QueryInt(d, "SELECT MIN(dur) FROM file_io" + where + " AND nr = 74"), 0);
  // The writes ran at increasing file positions covering the file.
  EXPECT_EQ(QueryInt(d, "SELECT MAX(pos + ret) FROM file_io" + where + " AND nr = 1"), 10 * kMiB);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_open" + where + " AND path = " + Q(f) + " AND ret >= 0"), 2);
  EXPECT_EQ(QueryRows(d, "SELECT path FROM file" + where), std::vector<std::string>{f});
  // Both dd processes, children of the shell, with their exit status.
  auto dds = QueryRows(d, "SELECT exe, exit_code FROM process WHERE run_id = 1 AND comm = 'dd' ORDER BY start_ts");
  EXPECT_EQ(dds, (std::vector<std::string>{"/usr/bin/dd\t0", "/usr/bin/dd\t0"}));
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE run_id = 1 AND ppid NOT IN "
                        "(SELECT pid FROM process WHERE run_id = 1) AND comm != 'sh'"), 0);
  auto run = QueryRows(d, "SELECT status, exit_reason, exit_code, events_dropped FROM run WHERE id = 1");
  EXPECT_EQ(run, std::vector<std::string>{"complete\texited\t0\t0"});
  EXPECT_GT(QueryInt(d, "SELECT end_ts - command_start_ts FROM run WHERE id = 1"), 0);
  // The analysis names the file with the right byte counts (11 reads: the
  // last one returns 0 at end of file).
  auto a = RunCmd({SyspgoBin(), "analyze", db, "files", "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  nlohmann::json rows = nlohmann::json::parse(a.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << a.out;
  nlohmann::json want = {{"path", f},      {"reads", 11},          {"read_bytes", 10485760},
                         {"writes", 10},   {"write_bytes", 10485760}, {"syncs", 1}};
  int found = 0;
  for (nlohmann::json& row : rows) {
    if (row["path"] != f) continue;
    ++found;
    for (auto& [k, v] : want.items()) EXPECT_EQ(row[k], v) << k << " of " << row.dump();
  }
  EXPECT_EQ(found, 1) << a.out;
}

TEST(Collect, FollowsTheTreeAndNothingElse) {
  TempDir dir;
  std::string a = dir.File("a"), b = dir.File("b"), c = dir.File("outsider"), db = dir.File("run.db");
  // A process outside the tree writes all the time.
  auto* outsider = popen(("while :; do dd if=/dev/zero of=" + c + " bs=4k count=1 2>/dev/null; sleep 0.005; done &"
                          " echo $!").c_str(), "r");
  char buf[32] = {};
  ASSERT_TRUE(fgets(buf, sizeof buf, outsider));
  pclose(outsider);
  int outsider_pid = atoi(buf);
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--", "sh", "-c",
                "sh -c 'dd if=/dev/zero of=" + a + " bs=4k count=10 2>/dev/null' & sh -c 'dd if=/dev/zero of=" + b +
                    " bs=4k count=20 2>/dev/null' & wait; sleep 0.1"});
  kill(outsider_pid, SIGKILL);
  ASSERT_EQ(r.status, 0) << r.err;
  Db d = OpenDb(db);
  for (auto& [file, bytes] : {std::pair{a, 40960}, std::pair{b, 81920}}) {
    DevIno di = StatFile(file);
    std::string where =
        " WHERE run_id = 1 AND dev = " + std::to_string(di.dev) + " AND ino = " + std::to_string(di.ino);
    EXPECT_EQ(QueryInt(d, "SELECT SUM(ret) FROM file_io" + where + " AND nr = 1"), bytes) << file;
    // Every write to the file came from the dd whose argv names it.
    EXPECT_EQ(QueryRows(d, "SELECT DISTINCT p.argv FROM file_io io JOIN process p ON p.run_id = io.run_id AND "
                           "p.pid = io.pid" + std::string(" WHERE io.run_id = 1 AND io.nr = 1 AND io.ino = ") +
                           std::to_string(di.ino)),
              std::vector<std::string>{"dd if=/dev/zero of=" + file + " bs=4k count=" +
                                       (bytes == 40960 ? "10" : "20")});
  }
  DevIno odi = StatFile(c);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE ino = " + std::to_string(odi.ino)), 0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_open WHERE path LIKE '%outsider%'"), 0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE argv LIKE '%outsider%'"), 0);
  // sh, two subshells (forked, then exec'd dd), sleep.
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE run_id = 1 AND comm = 'dd'"), 2);
}

// Paths looked up without an open: one call of each syscall fileio knows
// (tests/workloads/lookups.cc), with the arguments that workload passed.
TEST(Collect, PathLookupsWithoutAnOpenAreRecorded) {
  TempDir dir;
  std::string db = dir.File("run.db"), file = dir.File("file"), link = dir.File("link"), missing = dir.File("missing");
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--probes", "fileio", "--",
                   std::string(SYSPGO_WORKLOADS_BIN) + "/lookups", dir.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  Db d = OpenDb(db);
  std::string len = std::to_string(file.size());  // readlink returns the target's length
  EXPECT_EQ(QueryRows(d, "SELECT n.name, l.path, l.flags, l.ret FROM file_lookup l JOIN syscall_name n USING (nr) "
                         "WHERE l.run_id = 1 AND l.path LIKE " + Q(dir.path() + "/%") + " ORDER BY l.ts"),
            (std::vector<std::string>{
                "stat\t" + file + "\t0\t0", "lstat\t" + link + "\t0\t0", "access\t" + missing + "\t0\t-2",
                "readlink\t" + link + "\t0\t" + len, "newfstatat\t" + file + "\t256\t0",
                "readlinkat\t" + link + "\t0\t" + len, "faccessat\t" + file + "\t0\t0",
                "statx\t" + missing + "\t256\t-2", "faccessat2\t" + file + "\t512\t0",
                "execve\t" + missing + "\t0\t-2", "execveat\t" + missing + "\t256\t-2"}));
  // fstat, as newfstatat(fd, "", AT_EMPTY_PATH) or fstat(fd), names no path;
  // the successful exec of the workload itself is the proc group's.
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_lookup WHERE path = '' OR nr = 5"), 0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_lookup WHERE nr = 59 AND ret = 0"), 0);
  EXPECT_GT(QueryInt(d, "SELECT MIN(dur) FROM file_lookup WHERE run_id = 1"), 0);
}

TEST(Collect, ThreadsAreNotProcesses) {
  TempDir dir;
  std::string db = dir.File("run.db");
  // Every write a row (the lean tier keeps the first touch of each page),
  // so each thread's rows add up to what it wrote.
  auto r = RunCmd({SyspgoBin(), "collect", "--detail", "full", "-o", db, "--",
                   std::string(SYSPGO_WORKLOADS_BIN) + "/threads_write", dir.path(), "3", "64"});
  ASSERT_EQ(r.status, 0) << r.err;
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE run_id = 1"), 1);
  int64_t pid = QueryInt(d, "SELECT pid FROM process WHERE run_id = 1");
  EXPECT_EQ(QueryRows(d, "SELECT comm FROM thread WHERE run_id = 1 AND tid != pid ORDER BY comm"),
            (std::vector<std::string>{"writer-0", "writer-1", "writer-2"}));
  for (int i = 0; i < 3; ++i) {
    DevIno di = StatFile(dir.File("t" + std::to_string(i)));
    auto rows = QueryRows(d, "SELECT io.pid, t.comm, SUM(io.ret) FROM file_io io JOIN thread t ON t.run_id = 1 AND "
                             "t.tid = io.tid WHERE io.run_id = 1 AND io.nr = 1 AND io.ino = " +
                             std::to_string(di.ino) + " GROUP BY io.pid, t.comm");
    EXPECT_EQ(rows, std::vector<std::string>{std::to_string(pid) + "\twriter-" + std::to_string(i) + "\t65536"});
  }
}

// The lean tier keeps a write as a row when it first touches its pages:
// a file rewritten in place (O_TRUNC) starts again, and so does a new file
// on a freed inode number (unlink, then create). Every step of a
// checkpoint loop, either way, has its writes: analyze stalls groups steps
// by the calls they made.
TEST(Collect, LeanTierKeepsTheWritesOfRewrittenAndRecreatedFiles) {
  TempDir dir;
  std::string db = dir.File("run.db"), ckpt = dir.File("ckpt.bin"), tmp = dir.File("tmp.bin");
  std::string step = "dd if=/dev/zero bs=64k count=8 of=";
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "fileio", "-o", db, "--", "sh", "-c",
                   step + ckpt + " 2>/dev/null; " + step + ckpt + " 2>/dev/null; " + step + ckpt +
                       " 2>/dev/null; for i in 1 2 3; do " + step + tmp + " 2>/dev/null; rm " + tmp + "; done"});
  ASSERT_EQ(r.status, 0) << r.err;
  Db d = OpenDb(db);
  DevIno di = StatFile(ckpt);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE nr = 1 AND ret = 65536 AND ino = " + std::to_string(di.ino)),
            3 * 8);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io io JOIN file f USING (run_id, dev, ino) WHERE io.nr = 1 "
                        "AND io.ret = 65536 AND f.path = '" + tmp + "'"),
            3 * 8)
      << "a new file on the inode number of a removed one is touched anew";
  EXPECT_EQ(QueryInt(d, "SELECT SUM(calls) FROM file_io_total WHERE nr = 1 AND ino = " + std::to_string(di.ino)), 3 * 8);
}

// The lean tier keeps each CPU's latest totals in a few slots and writes a
// key back when another takes its slot: writes that go round forty files,
// more keys than the slots, are each counted once, and so are those that
// were still in a slot when the recording ended.
TEST(Collect, LeanTierCountsEveryCallOfKeysThatTakeEachOthersSlots) {
  TempDir dir;
  std::string db = dir.File("run.db");
  constexpr int kFiles = 40, kRounds = 50;
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "fileio", "-o", db, "--", "bash", "-c",
                   "for i in $(seq " + std::to_string(kFiles) + "); do exec {fd}>" + dir.File("f") +
                       "$i; fds+=($fd); done; for r in $(seq " + std::to_string(kRounds) +
                       "); do for fd in \"${fds[@]}\"; do echo x >&$fd; done; done"});
  ASSERT_EQ(r.status, 0) << r.err;
  Db d = OpenDb(db);
  std::vector<std::string> made;  // the files' inode numbers, in the order they were made
  for (int i = 1; i <= kFiles; ++i) made.push_back(std::to_string(StatFile(dir.File("f") + std::to_string(i)).ino));
  std::string inos;
  for (const std::string& ino : made) inos += (inos.empty() ? "" : ", ") + ino;
  std::string where = " WHERE nr = 1 AND dev = " + std::to_string(StatFile(dir.File("f1")).dev) + " AND ino IN (" +
                      inos + ")";
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io_total" + where), kFiles);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io_total" + where + " AND calls = " + std::to_string(kRounds) +
                            " AND bytes = " + std::to_string(2 * kRounds) + " AND errors = 0"),
            kFiles);
  EXPECT_EQ(QueryInt(d, "SELECT SUM(calls) FROM file_io_hist" + where), kFiles * kRounds);
  // Each file's first write came in the first round, in the files' order.
  EXPECT_EQ(QueryRows(d, "SELECT ino FROM file_io_total" + where + " ORDER BY first_ts"), made);
}

TEST(Collect, ExitStatusIsTheCommands) {
  TempDir dir;
  std::string db = dir.File("run.db");
  EXPECT_EQ(RunCmd({SyspgoBin(), "collect", "-o", db, "--", "sh", "-c", "exit 7"}).status, 7);
  EXPECT_EQ(RunCmd({SyspgoBin(), "collect", "-o", db, "--", "sh", "-c", "kill -TERM $$"}).status, 128 + SIGTERM);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, "SELECT id, exit_reason, exit_code FROM run ORDER BY id"),
            (std::vector<std::string>{"1\texited\t7", "2\tsignaled\t143"}));
  EXPECT_EQ(QueryRows(d, "SELECT run_id, exit_code FROM process WHERE comm = 'sh' ORDER BY run_id"),
            (std::vector<std::string>{"1\t7", "2\t143"}));
}

// --json: the summary machines read (syspgo pgo does) instead of the lines
// for people, which may change.
TEST(Collect, JsonSummaryHasTheRunItsEventsAndTheCommandsExit) {
  TempDir dir;
  std::string db = dir.File("run.db"), json = dir.File("run.json");
  ASSERT_EQ(RunCmd({SyspgoBin(), "collect", "-o", db, "--probes", "fileio", "--", "true"}).status, 0);
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--json", json, "--probes", "fileio", "--", "sh", "-c",
                   "cat /etc/hostname >/dev/null; exit 3"});
  ASSERT_EQ(r.status, 3) << r.err;
  nlohmann::json j = nlohmann::json::parse(ReadAll(json), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << ReadAll(json);
  EXPECT_EQ(j["run_id"], 2);
  EXPECT_EQ(j["db"], db);
  EXPECT_EQ(j["exit_reason"], "exited");
  EXPECT_EQ(j["exit_status"], 3);
  EXPECT_EQ(j["events_lost"], 0);
  Db d = OpenDb(db);
  EXPECT_EQ(j["events"].get<int64_t>(), QueryInt(d, "SELECT events_recorded FROM run WHERE id = 2"));
  bool fileio = false;
  for (const auto& g : j["groups"]) fileio = fileio || (g["group"] == "fileio" && g["attached"] == true && g["events"] > 0);
  EXPECT_TRUE(fileio) << j.dump(1);
}

TEST(Collect, AppendsRunsAndKeepsEarlierOnes) {
  TempDir dir;
  std::string db = dir.File("run.db"), f = dir.File("x");
  ASSERT_EQ(RunCmd({SyspgoBin(), "collect", "-o", db, "--", "dd", "if=/dev/zero", "of=" + f, "bs=4k", "count=3"}).status, 0);
  int64_t first;
  {
    Db d = OpenDb(db);
    first = QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE run_id = 1");
    ASSERT_GT(first, 0);
  }
  ASSERT_EQ(RunCmd({SyspgoBin(), "collect", "-o", db, "--", "true"}).status, 0);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run"), 2);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE run_id = 1"), first);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_probe WHERE run_id = 2 AND attached = 1"),
            QueryInt(d, "SELECT COUNT(*) FROM run_probe WHERE run_id = 2"));
}

TEST(Collect, AttachToARunningProcess) {
  TempDir dir;
  std::string db = dir.File("run.db"), f = dir.File("late"), go = dir.File("go");
  // The target waits until it is attached, then writes and exits.
  pid_t pid, collector;
  std::string script = "while [ ! -e " + go + " ]; do sleep 0.02; done; dd if=/dev/zero of=" + f +
                       " bs=4k count=5 2>/dev/null";
  const char* argv[] = {"sh", "-c", script.c_str(), nullptr};
  ASSERT_EQ(posix_spawnp(&pid, "sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  std::string bin = SyspgoBin(), spid = std::to_string(pid);
  const char* cargv[] = {bin.c_str(), "collect", "-o", db.c_str(), "-p", spid.c_str(), nullptr};
  ASSERT_EQ(posix_spawn(&collector, cargv[0], nullptr, nullptr, const_cast<char**>(cargv), environ), 0);
  bool attached = WaitAttached(db);
  std::ofstream(go) << "go";
  int st;
  waitpid(pid, &st, 0);
  waitpid(collector, &st, 0);
  ASSERT_TRUE(attached);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, "SELECT attached, target_pid, exit_reason FROM run"),
            std::vector<std::string>{"1\t" + spid + "\ttarget-exited"});
  DevIno di = StatFile(f);
  EXPECT_EQ(QueryInt(d, "SELECT SUM(ret) FROM file_io WHERE nr = 1 AND ino = " + std::to_string(di.ino)), 20480);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE pid = " + spid + " AND argv LIKE 'sh -c while%'"), 1);
}

TEST(Collect, DurationEndsRecordingAndKeepsTheCommandsStatus) {
  TempDir dir;
  std::string db = dir.File("run.db");
  auto t0 = std::chrono::steady_clock::now();
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--duration", "0.3", "--", "sh", "-c", "sleep 1; exit 4"});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_GE(secs, 1.0);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, "SELECT exit_reason, exit_code FROM run"), std::vector<std::string>{"duration\t4"});
  int64_t recorded = QueryInt(d, "SELECT end_ts - command_start_ts FROM run");
  EXPECT_GE(recorded, 300000000);
  EXPECT_LT(recorded, 900000000);
}

// `exit 200` must not be recorded as exit_reason 'signaled' (its
// status is above 128, as a shell reports a signal). The raw wait status
// tells them apart; the status itself stays as a shell reports it.
TEST(Collect, AnExitStatusAbove128IsAnExitAndASignalIsASignal) {
  TempDir dir;
  struct Case {
    const char* script;
    int status;
    const char* row;
  };
  for (const Case& c : {Case{"exit 200", 200, "complete\texited\t200"}, Case{"exit 129", 129, "complete\texited\t129"},
                        Case{"kill -TERM $$", 143, "complete\tsignaled\t143"}}) {
    std::string db = dir.File(std::to_string(c.status) + ".db");
    auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--probes", "proc", "--", "sh", "-c", c.script});
    EXPECT_EQ(r.status, c.status) << c.script << ": " << r.err;
    Db d = OpenDb(db);
    EXPECT_EQ(QueryRows(d, "SELECT status, exit_reason, exit_code FROM run"), std::vector<std::string>{c.row})
        << c.script;
  }
}

TEST(Collect, SigtermFinalizesTheRunAndStopsTheCommand) {
  TempDir dir;
  std::string db = dir.File("run.db");
  pid_t pid;
  std::string bin = SyspgoBin();
  const char* argv[] = {bin.c_str(), "collect", "-o", db.c_str(), "--", "sleep", "30", nullptr};
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  ASSERT_TRUE(WaitAttached(db));
  kill(pid, SIGTERM);
  int st;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 128 + SIGTERM);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, "SELECT status, exit_reason, exit_code FROM run"),
            std::vector<std::string>{"complete\tinterrupted\t143"});
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE comm = 'sleep' AND exit_code = 143"), 1);
}

// Bad input: a clear message naming the input, a non-zero exit, nothing run.
TEST(CollectBadInput, CommandNotFound) {
  TempDir dir;
  std::string db = dir.File("run.db");
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", db, "--", "no-such-command-xyz"}), 1,
                         "command 'no-such-command-xyz' not found in PATH"));
  EXPECT_NE(access(db.c_str(), F_OK), 0) << "nothing may be created before the inputs are checked";
}

TEST(CollectBadInput, OutputNotWritable) {
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", "/nonexistent-dir/run.db", "--", "true"}), 1,
                         "cannot create profile database '/nonexistent-dir/run.db'"));
}

TEST(CollectBadInput, NoSuchPid) {
  TempDir dir;
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", dir.File("run.db"), "-p", "999999"}), 1,
                         "no process with pid 999999"));
}

TEST(CollectBadInput, NotADatabaseIsRefusedUntouched) {
  TempDir dir;
  std::string f = dir.File("notes.txt");
  std::ofstream(f) << "my precious notes\n";
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", f, "--", "true"}), 1,
                         "'" + f + "' is not a syspgo profile database"));
  std::ifstream in(f);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "my precious notes\n");
}

TEST(CollectBadInput, WithoutBpfCapabilitiesNamesThem) {
  TempDir dir;
  chmod(dir.path().c_str(), 0777);
  EXPECT_TRUE(FailedWith(RunCmd({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                                 SyspgoBin(), "collect", "-o", dir.File("run.db"), "--", "true"}),
                         1, "needs CAP_BPF and CAP_PERFMON"));
}

TEST(CollectBadInput, UnknownProbeGroupAndOptions) {
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "--probes", "fileio,nosuch", "--", "true"}), 2,
                         "unknown probe group 'nosuch'"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", "x.db"}), 2, "no command to record"));
}

}  // namespace
}  // namespace syspgo::test
