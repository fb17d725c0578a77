//===- hostile_input_test.cc - plans, databases and paths from someone else ===//
//
// syspgo runs as root (sudo), and the plans and profile databases it reads
// may have been made by anyone. Each test here
// is one such input, made the way an attacker would make it (real files, a
// real FIFO and socket, databases edited with the sqlite3 shell), fed to the
// real readers and the real command, with what must happen instead: the
// command still finishes, nothing is allocated by a claimed length, nothing
// blocks, the file is refused with a message naming it and what to do, and
// a terminal is never sent the escapes a path holds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "analyze/sample_set.h"
#include "common/profile_db.h"
#include "common/util.h"
#include "optimize/plan.h"
#include "optimize/prefetch.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr uint64_t kHuge = 1ULL << 62;  // an extent, or a size, no file has

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A plan of `files`, in the order given (the callers give their first
// touches ascending, so that it passes CheckPlan).
Plan PlanOf(const std::vector<PlanFile>& files) {
  Plan plan;
  plan.creation.syspgo_version = "test";
  plan.files = files;
  return plan;
}

PlanFile FileWithExtent(const std::string& path, const FileFingerprint& fp, uint64_t offset, uint64_t length,
                        uint64_t ts) {
  return {path, fp, {{offset, length, ts}}};
}

// ---- Terminal output ----------------------------------------------------------

TEST(TerminalSafe, EscapesWhatATerminalActsOnAndKeepsTheRest) {
  EXPECT_EQ(TerminalSafe("/usr/lib/libc.so.6"), "/usr/lib/libc.so.6");
  EXPECT_EQ(TerminalSafe("\x1b]0;owned\a\x1b[2J"), "\\x1b]0;owned\\x07\\x1b[2J");
  EXPECT_EQ(TerminalSafe("a\nb\tc\rd"), "a\\x0ab\\x09c\\x0dd");  // a value's own line breaks are escaped too
  EXPECT_EQ(TerminalSafe(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(TerminalSafe("del\x7f"), "del\\x7f");
  EXPECT_EQ(TerminalSafe("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(TerminalSafe("csi\xc2\x9b" "2J"), "csi\\xc2\\x9b2J");         // U+009B, CSI in UTF-8
  EXPECT_EQ(TerminalSafe("raw\x9b" "2J"), "raw\\x9b2J");                  // 8-bit CSI, not UTF-8
  EXPECT_EQ(TerminalSafe("cut\xe2\x82"), "cut\\xe2\\x82");                // a sequence cut short
  EXPECT_EQ(TerminalSafe("over\xc0\xaf"), "over\\xc0\\xaf");              // overlong '/'
  EXPECT_EQ(TerminalSafe("surr\xed\xa0\x80"), "surr\\xed\\xa0\\x80");     // a UTF-16 surrogate
  EXPECT_EQ(TerminalSafe("it's 'a\\b'"), "it's 'a\\b'");                  // quotes, backslashes: as they were
  EXPECT_EQ(TerminalSafeLines("line 1 \x1b[2J\nline 2"), "line 1 \\x1b[2J\nline 2");
}

// The escapes of a window title and a screen clear, as a file name.
const std::string kEvil = "\x1b]0;owned\a\x1b[2J";

// Appends kEvil to every path, task name and command line a fixture holds.
void Poison(const std::string& db) {
  std::string e = "char(27) || ']0;owned' || char(7) || char(27) || '[2J'";
  std::string sql;
  for (const char* col : {"file.path", "file_open.path", "mapping.path", "process.comm", "process.exe",
                          "process.argv", "thread.comm", "run.command", "block_rq.comm", "page_cache.comm",
                          "offcpu.waker_comm", "memory_cgroup.path", "block_op.name"}) {
    std::string c = col;
    std::string table = c.substr(0, c.find('.')), column = c.substr(c.find('.') + 1);
    sql += "UPDATE " + table + " SET " + column + " = " + column + " || " + e + ";\n";
  }
  ASSERT_EQ(ExecSql(db, sql), "");
}

// Every analysis's text, on fixtures whose paths, task names and commands
// end in terminal escapes: no escape reaches stdout or stderr, each is
// shown as \x1b text, and the JSON still has the exact bytes.
TEST(TerminalSafe, AnalysesShowPathsTaskNamesAndCommandsEscaped) {
  TempDir dir;
  struct Case {
    const char* fixture;
    std::vector<std::string> args;
  };
  const Case cases[] = {{"files_fixture.sql", {"files", "--run", "1", "--all"}},
                        {"diagnose_fixture.sql", {"stalls", "-v"}},
                        {"diagnose_fixture.sql", {"io", "--all"}},
                        {"diagnose_fixture.sql", {"offcpu"}},
                        {"diagnose_fixture.sql", {"block"}},
                        {"pagecache_fixture.sql", {"pagecache"}},
                        {"pagecache_fixture.sql", {"access"}}};
  for (size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    std::string db = FixtureDb(dir, c.fixture, "case" + std::to_string(i) + ".db");
    Poison(db);
    std::vector<std::string> argv = {SyspgoBin(), "analyze", db};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    CmdResult r = RunCmd(argv);
    std::string what = c.fixture + std::string(" ") + c.args[0];
    ASSERT_EQ(r.status, 0) << what << ": " << r.err;
    for (char bad : {'\x1b', '\a'}) {
      EXPECT_EQ(r.out.find(bad), std::string::npos) << what << " printed a raw control byte:\n" << r.out;
      EXPECT_EQ(r.err.find(bad), std::string::npos) << what << " printed a raw control byte:\n" << r.err;
    }
    // The command line heads every report but offcpu's folded stacks.
    if (c.args[0] != "offcpu") {
      EXPECT_NE(r.out.find("\\x1b]0;owned\\x07\\x1b[2J"), std::string::npos) << what << r.out;
    }
  }
  std::string db = FixtureDb(dir, "files_fixture.sql", "json.db");
  Poison(db);
  CmdResult r = RunCmd({SyspgoBin(), "analyze", db, "files", "--run", "1", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  WriteBytes(dir.File("files.json"), r.out);
  EXPECT_EQ(ReadJson(dir.File("files.json"))[0]["path"], "/data/ckpt.bin" + kEvil);
}

// A plan is outside input too: plan-show and the replayer's warnings.
TEST(TerminalSafe, PlanPathsHostAndWarningsAreShownEscaped) {
  TempDir dir;
  std::string f = dir.File("data" + kEvil);
  WriteBytes(f, std::string(10000, 'x'));
  auto fp = ComputeFingerprint(f);
  ASSERT_TRUE(fp.ok()) << fp.error().message;
  FileFingerprint changed = *fp;
  changed.mtime_ns += 1;  // skipped with a warning that names it
  Plan plan = PlanOf({FileWithExtent(f, changed, 0, 8192, 5)});
  plan.creation.host = "host" + kEvil;
  std::string p = dir.File("evil.plan");
  ASSERT_TRUE(WritePlan(plan, p).ok());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"plan-show", p, "-v"}, {"prefetch", p}, {"prefetch", p, "--dry-run", "-vv"}}) {
    std::vector<std::string> argv = {SyspgoBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    CmdResult r = RunCmd(argv);
    EXPECT_EQ(r.status, 0) << args[0] << ": " << r.err;
    EXPECT_EQ((r.out + r.err).find('\x1b'), std::string::npos) << args[0] << ":\n" << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("data\\x1b]0;owned\\x07\\x1b[2J"), std::string::npos) << args[0] << r.out << r.err;
  }
  CmdResult r = RunCmd({SyspgoBin(), "plan-show", p, "--json"});
  WriteBytes(dir.File("plan.json"), r.out);
  nlohmann::json shown = ReadJson(dir.File("plan.json"));
  EXPECT_EQ(shown["files"][0]["path"], f);
  EXPECT_EQ(shown["host"], "host" + kEvil);
}

// ---- Plans ------------------------------------------------------------------

// One extent of 2^62 bytes over a 6-byte file once asked for
// a chunk entry per 4 MiB of it (std::bad_alloc), and the command never ran.
TEST(HostilePlan, AHugeExtentOverAShortFileReadsOnlyTheFile) {
  TempDir dir;
  std::string f = dir.File("six");
  WriteBytes(f, "abcdef");
  auto fp = ComputeFingerprint(f);
  ASSERT_TRUE(fp.ok()) << fp.error().message;
  Plan plan = PlanOf({FileWithExtent(f, *fp, 0, kHuge, 10)});
  std::string p = dir.File("huge.plan");
  ASSERT_TRUE(WritePlan(plan, p).ok());
  auto read = ReadPlan(p);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->files[0].extents[0].length, kHuge);  // the file says so; readers go by the file's size
  EXPECT_EQ(read->Bytes(), kPlanPageSize);

  PrefetchOptions o;
  o.lookups = false;
  PrefetchStats s = Replay(*read, o);
  ASSERT_EQ(s.files.size(), 1u);
  EXPECT_EQ(s.files[0].outcome, FileOutcome::kRead) << s.files[0].reason;
  EXPECT_EQ(s.bytes_read, 6u);
  EXPECT_EQ(s.extents_read, 1u);
  EXPECT_EQ(s.bytes_planned, kPlanPageSize);
  EXPECT_EQ(nlohmann::json::parse(PrefetchStatsJson(*read, s), nullptr, false)["bytes_planned"], 4096);

  std::string listing;
  PrefetchStats dry = DryRun(*read, o, &listing);
  EXPECT_EQ(dry.bytes_read, 6u);
  EXPECT_NE(listing.find("4.0 KiB"), std::string::npos) << listing;
  EXPECT_NE(listing.find("would read 6 bytes"), std::string::npos) << listing;

  auto held = HoldPlanPages(*read, s);
  ASSERT_TRUE(held.ok()) << held.error().message;
  EXPECT_EQ(held->bytes, kPlanPageSize);
  EXPECT_EQ(nlohmann::json::parse(PlanJson(*read), nullptr, false)["files"][0]["extents"][0]["length"], kHuge);

  // The command runs, and gets its own exit status, with and without
  // waiting for the replay.
  std::string ran = dir.File("ran");
  for (const char* before : {"--before", "--lead=0"}) {
    unlink(ran.c_str());
    CmdResult r =
        RunCmd({"timeout", "60", SyspgoBin(), "prefetch", p, before, "--", "sh", "-c", "touch " + ran + "; exit 7"});
    EXPECT_EQ(r.status, 7) << before << ": " << r.err;
    EXPECT_EQ(access(ran.c_str(), F_OK), 0) << before << ": the command did not run: " << r.err;
  }
}

// The same with the size claimed too, over several files: nothing matches
// the plan, so nothing is read, and no total overflows.
TEST(HostilePlan, ClaimedSizesOfTwoToThe62AreSkippedWithoutAllocating) {
  TempDir dir;
  std::vector<PlanFile> files;
  for (int i = 0; i < 6; ++i) {
    std::string f = dir.File("f" + std::to_string(i));
    WriteBytes(f, "abcdef");
    auto fp = ComputeFingerprint(f);
    ASSERT_TRUE(fp.ok());
    fp->size = kHuge;
    files.push_back(FileWithExtent(f, *fp, kPlanPageSize, kHuge, 10 + i));
  }
  Plan plan = PlanOf(files);
  EXPECT_EQ(plan.Bytes(), UINT64_MAX);  // saturates instead of wrapping
  PrefetchOptions o;
  o.lookups = false;
  o.budget_bytes = 4 << 20;
  PrefetchStats s = Replay(plan, o);
  EXPECT_EQ(s.files_changed, 6u);
  EXPECT_EQ(s.bytes_read, 0u);
  for (const auto& r : s.files) EXPECT_NE(r.reason.find("size"), std::string::npos) << r.reason;
  PrefetchStats dry = DryRun(plan, o, nullptr);
  EXPECT_EQ(dry.files_changed, 6u);
}

// Row 8: a plan listing a FIFO made open(2) wait forever. A FIFO, a
// device, a directory and a socket are each refused, by kind, before
// anything reads them, while the regular file beside them is read.
TEST(HostilePlan, FifoDeviceDirectoryAndSocketAreRefusedWithoutBlocking) {
  TempDir dir;
  std::string fifo = dir.File("fifo"), sub = dir.File("dir"), sock = dir.File("sock"), ok = dir.File("ok");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0) << strerror(errno);
  ASSERT_EQ(mkdir(sub.c_str(), 0755), 0);
  int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(bind(sfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << strerror(errno);
  WriteBytes(ok, std::string(5000, 'o'));
  auto okfp = ComputeFingerprint(ok);
  ASSERT_TRUE(okfp.ok());
  FileFingerprint made_up{8192, 1, 2, 3, 4, 5};
  Plan plan = PlanOf({FileWithExtent(fifo, made_up, 0, 8192, 1), FileWithExtent("/dev/null", made_up, 0, 8192, 2),
                      FileWithExtent(sub, made_up, 0, 8192, 3), FileWithExtent(sock, made_up, 0, 8192, 4),
                      FileWithExtent(ok, *okfp, 0, 8192, 5)});
  const char* kinds[] = {"FIFO (named pipe)", "character device", "directory", "socket"};
  std::string p = dir.File("kinds.plan");
  ASSERT_TRUE(WritePlan(plan, p).ok());

  // The command first, under a timeout: a blocked open would hang here.
  CmdResult r = RunCmd({"timeout", "60", SyspgoBin(), "prefetch", p, "--json", dir.File("out.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json out = ReadJson(dir.File("out.json"));
  for (int i = 0; i < 4; ++i) {
    nlohmann::json& row = out["files"][i];
    EXPECT_EQ(row["outcome"], "failed") << kinds[i];
    EXPECT_NE(row["reason"].get<std::string>().find(kinds[i]), std::string::npos) << kinds[i];
    EXPECT_NE(r.err.find(kinds[i]), std::string::npos) << r.err;
  }
  EXPECT_EQ(out["files"][4]["outcome"], "read");
  EXPECT_EQ(out["bytes_read"], 5000);

  PrefetchOptions o;
  o.lookups = false;
  for (bool dry : {false, true}) {
    PrefetchStats s = dry ? DryRun(plan, o, nullptr) : Replay(plan, o);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(s.files[i].outcome, FileOutcome::kFailed) << kinds[i];
      EXPECT_NE(s.files[i].reason.find(kinds[i]), std::string::npos) << s.files[i].reason;
    }
    EXPECT_EQ(s.files[4].outcome, FileOutcome::kRead) << s.files[4].reason;
    EXPECT_EQ(s.bytes_read, 5000u);
  }

  // The plan itself, and a profile's paths (of files touched, of binaries
  // mapped), may be a FIFO as well.
  EXPECT_TRUE(FailedWith(RunCmd({"timeout", "60", SyspgoBin(), "plan-show", fifo}), 1,
                         "plan " + fifo + " is a FIFO (named pipe), not a regular file"));
  PlanBuilder b;
  DevIno id = StatFile(fifo);
  b.Add({fifo, id.dev, id.ino, 0, 4096, 1});
  auto built = b.Build();
  ASSERT_EQ(built.warnings.size(), 1u);
  EXPECT_NE(built.warnings[0].find("FIFO"), std::string::npos) << built.warnings[0];
  auto id_of_fifo = ReadBuildId(fifo);
  ASSERT_FALSE(id_of_fifo.ok());
  EXPECT_NE(id_of_fifo.error().message.find(fifo + " is a FIFO (named pipe)"), std::string::npos)
      << id_of_fifo.error().message;
  close(sfd);
}

// ---- Profile databases --------------------------------------------------------

std::string Sqlite3(const std::string& db, const std::string& sql) {
  CmdResult r = RunCmd({"sqlite3", db, sql});
  EXPECT_EQ(r.status, 0) << sql << ": " << r.err;
  return r.err;
}

// Row 12: `file_io` replaced by a view over an endless recursive query kept
// `syspgo analyze DB files` running, memory growing, until it was killed.
TEST(HostileDb, AViewInPlaceOfATableIsRefusedBeforeAnyQueryRuns) {
  TempDir dir;
  std::string db = FixtureDb(dir, "files_fixture.sql");
  Sqlite3(db, "DROP TABLE file_io; CREATE VIEW file_io AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 "
              "FROM r) SELECT 1 AS run_id, n AS ts, 1 AS dur, 100 AS pid, 100 AS tid, 0 AS nr, 3 AS fd, 2049 AS "
              "dev, n AS ino, 32768 AS kind, 0 AS pos, 1 AS req, 1 AS ret FROM r;");
  std::string before = ReadAll(db);
  CmdResult r = RunCmd({"timeout", "60", SyspgoBin(), "analyze", db, "files", "--run", "1"});
  EXPECT_TRUE(FailedWith(
      r, 1, "'" + db + "' is not a database syspgo wrote: 'file_io' is a view where syspgo's schema has a table"))
      << "(124: it ran until the timeout)";
  EXPECT_NE(r.err.find("DROP VIEW \"file_io\""), std::string::npos) << r.err;
  EXPECT_EQ(ReadAll(db), before);
  // Nor does collect append to it.
  auto w = OpenProfileDb(db, DbMode::kCreateOrAppend);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("'file_io' is a view"), std::string::npos) << w.error().message;
}

TEST(HostileDb, TriggersVirtualTablesAndObjectsTheSchemaLacksAreRefused) {
  struct Case {
    const char* sql;
    const char* says;
  };
  const Case cases[] = {
      {"CREATE TRIGGER t AFTER INSERT ON run BEGIN DELETE FROM file; END;", "it holds a trigger, 't' on 'run'"},
      {"CREATE VIRTUAL TABLE v USING fts5(x);", "'v' is a virtual table"},
      {"CREATE VIEW extra AS SELECT 1;", "it holds a view 'extra' that syspgo's schema does not have"},
      {"CREATE TABLE extra (x INTEGER);", "it holds a table 'extra' that syspgo's schema does not have"},
      {"CREATE INDEX extra_i ON file (path);", "it holds an index 'extra_i' that syspgo's schema does not have"},
      {"DROP VIEW page_cache_refault; CREATE VIEW page_cache_refault AS SELECT 1 AS run_id;",
       "its view 'page_cache_refault' is not defined as syspgo's schema defines it"},
      {"DROP TABLE file_io; CREATE TABLE file_io (run_id INTEGER, ts INTEGER, dur AS (ts * 2));",
       "its table 'file_io' is not defined as syspgo's schema defines it"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    std::string db = FixtureDb(dir, "files_fixture.sql");
    Sqlite3(db, c.sql);
    for (DbMode m : {DbMode::kReadOnly, DbMode::kCreateOrAppend}) {
      auto opened = OpenProfileDb(db, m);
      ASSERT_FALSE(opened.ok()) << c.sql;
      EXPECT_NE(opened.error().message.find("'" + db + "' is not a database syspgo wrote: " + c.says),
                std::string::npos)
          << opened.error().message;
    }
  }
}

// What real databases hold stays readable: the documented view written
// with other spacing and no comments, ANALYZE's statistics, a database from
// before a table existed.
TEST(HostileDb, WhatSyspgoAndItsUsersWriteIsAccepted) {
  TempDir dir;
  std::string db = FixtureDb(dir, "files_fixture.sql");
  Db d = OpenDb(db);
  auto sql = QueryRows(d, "SELECT sql FROM sqlite_master WHERE name = 'page_cache_refault'");
  ASSERT_EQ(sql.size(), 1u);
  std::string one_line;
  for (const std::string& line : Split(sql[0], '\n')) one_line += Trim(line.substr(0, line.find("--"))) + "  ";
  Sqlite3(db, "DROP VIEW page_cache_refault; " + one_line + "; ANALYZE; DROP TABLE block_latency_hist;");
  auto opened = OpenProfileDb(db, DbMode::kReadOnly);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  CmdResult r = RunCmd({SyspgoBin(), "analyze", db, "files", "--run", "1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("/data/ckpt.bin"), std::string::npos) << r.out;
}

constexpr char kEndless[] = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r";
constexpr char kHundredThousand[] =
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100000) SELECT COUNT(*) FROM r";

// Whatever gets past the schema check (or a query of syspgo's own on a
// planted file) is bounded: a statement stops after its budget of steps
// with an error naming the file, whether stepped or run through Exec.
TEST(HostileDb, AStatementPastItsStepBudgetStopsWithAnErrorNamingTheFile) {
  TempDir dir;
  std::string path = FixtureDb(dir, "files_fixture.sql");
  auto db = Db::Open(path, SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db.ok()) << db.error().message;
  db->SetStepLimit(20'000'000);
  auto st = db->Prepare(kEndless);
  ASSERT_TRUE(st.ok());
  Status err;
  EXPECT_FALSE(st->Step(&err));
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("database '" + path + "'"), std::string::npos) << err.error().message;
  EXPECT_NE(err.error().message.find("stopped after 20000000 steps of work"), std::string::npos) << err.error().message;
  Status ex = db->Exec(kEndless);
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.error().message.find("stopped after 20000000 steps of work"), std::string::npos) << ex.error().message;

  // The budget is per execution: a statement of a few million steps runs
  // again and again, well past the budget in all.
  auto small = db->Prepare(kHundredThousand);
  ASSERT_TRUE(small.ok());
  for (int i = 0; i < 30; ++i) {
    Status e;
    ASSERT_TRUE(small->Step(&e)) << i << ": " << e.error().message;
    EXPECT_EQ(small->Int(0), 100000);
    small->Reset();
  }
  // And the default budget is far above that (about 90 M steps here).
  auto fresh = Db::Open(path, SQLITE_OPEN_READONLY);
  ASSERT_TRUE(fresh.ok());
  auto five_million = fresh->QueryInt(
      "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5000000) SELECT COUNT(*) FROM r");
  ASSERT_TRUE(five_million.ok()) << five_million.error().message;
  EXPECT_EQ(*five_million, 5000000);
}

// SQLite's memory and the longest value it will make are bounded too.
TEST(HostileDb, MemoryAndValueLengthAreBounded) {
  TempDir dir;
  std::string path = FixtureDb(dir, "files_fixture.sql");
  auto db = Db::Open(path, SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(sqlite3_hard_heap_limit64(-1), kSqliteHeapLimit);
  auto st = db->Prepare("SELECT length(zeroblob(300 * 1048576))");
  ASSERT_TRUE(st.ok());
  Status err;
  EXPECT_FALSE(st->Step(&err));
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("a value past 256 MiB"), std::string::npos) << err.error().message;

  sqlite3_int64 was = sqlite3_hard_heap_limit64(16 << 20);
  auto big = db->Prepare(
      "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 20000) "
      "SELECT length(group_concat(hex(randomblob(1000)))) FROM r");
  ASSERT_TRUE(big.ok());
  Status nomem;
  EXPECT_FALSE(big->Step(&nomem));
  sqlite3_hard_heap_limit64(was);
  ASSERT_FALSE(nomem.ok());
  EXPECT_NE(nomem.error().message.find("SQLite may use at most 16 MiB in this process"), std::string::npos)
      << nomem.error().message;
}

// Row 5: a dangling symlink planted at `-o X` made SQLite, as root, create
// the file it names. Every path with a link in it is refused, and nothing
// is created.
TEST(HostileDb, ASymlinkedDatabasePathIsRefusedAndItsTargetIsNotCreated) {
  TempDir dir;
  std::string target = dir.File("elsewhere.db"), link = dir.File("run.db");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", link, "--", "true"}), 1,
                         "'" + link + "' is a symbolic link (to '" + target + "')"));
  EXPECT_NE(access(target.c_str(), F_OK), 0) << "the link's target was created";
  auto opened = OpenProfileDb(link, DbMode::kCreateOrAppend);
  EXPECT_FALSE(opened.ok());
  EXPECT_NE(access(target.c_str(), F_OK), 0) << "the link's target was created";

  // A directory on the way that is a link.
  std::string real = dir.File("real"), via = dir.File("via");
  ASSERT_EQ(mkdir(real.c_str(), 0755), 0);
  ASSERT_EQ(symlink(real.c_str(), via.c_str()), 0);
  CmdResult r = RunCmd({SyspgoBin(), "collect", "-o", via + "/run.db", "--", "true"});
  EXPECT_TRUE(FailedWith(r, 1, "goes through a symbolic link"));
  EXPECT_NE(r.err.find("Give the path without links: " + real + "/run.db"), std::string::npos) << r.err;
  EXPECT_NE(access((real + "/run.db").c_str(), F_OK), 0) << "created through the link";

  // Reading through a link to a real database is refused as well.
  std::string db = FixtureDb(dir, "files_fixture.sql", "real.db"), to_db = dir.File("to.db");
  ASSERT_EQ(symlink(db.c_str(), to_db.c_str()), 0);
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "analyze", to_db, "files"}), 1, "is a symbolic link"));
  // And a FIFO given as the database does not block.
  std::string fifo = dir.File("fifo.db");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_TRUE(FailedWith(RunCmd({"timeout", "60", SyspgoBin(), "analyze", fifo, "files"}), 1,
                         "'" + fifo + "' is a FIFO (named pipe), not a profile database"));
}

}  // namespace
}  // namespace syspgo::test
