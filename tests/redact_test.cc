//===- redact_test.cc - `syspgo redact`: nothing identifying is left ------===//
// A real collection with distinctive strings in its paths, argv, host name
// and environment is redacted; then the bytes of the output file (made by
// VACUUM, so every page is live) must hold none of them, the input must be
// unchanged, and the analyses must still run on the copy.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "analyze/redact.h"
#include "common/profile_db.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

const char kHost[] = "redact-host-q7z";
const char kArg[] = "hunter2-argv-token";
const char kEnv[] = "env-secret-9137";


// Records into `db` a command that writes `payload` twice (two runs), with
// a secret argument, host name and environment variable.
void Record(const std::string& db, const std::string& payload) {
  for (int run = 0; run < 2; ++run) {
    auto r = RunCmd({"unshare", "--uts", "sh", "-c",
                     std::string("echo ") + kHost + " > /proc/sys/kernel/hostname && SECRET=" + kEnv + " exec " +
                         SyspgoBin() + " collect -o " + db + " -- sh -c 'dd if=/dev/zero of=" + payload +
                         " bs=4k count=2 2>/dev/null; : " + kArg + "'"});
    ASSERT_EQ(r.status, 0) << r.err;
  }
}

struct Recorded {
  TempDir dir;
  std::string secret_dir, payload, db;
  Recorded() {
    secret_dir = dir.File("client-acme-secret-dir");
    mkdir(secret_dir.c_str(), 0755);
    payload = secret_dir + "/payload-q3.bin";
    db = dir.File("run.db");
    Record(db, payload);
  }
  std::vector<std::string> Secrets() const {
    return {dir.path(), "client-acme-secret-dir", "payload-q3.bin", kArg, kHost};
  }
};

TEST(Redact, NoPathArgvOrHostIsLeftAndAnalysesStillRun) {
  Recorded rec;
  std::string before = ReadAll(rec.db);
  for (const auto& s : rec.Secrets())
    ASSERT_NE(before.find(s), std::string::npos) << "the recording lacks '" << s << "': the test proves nothing";
  EXPECT_EQ(before.find(kEnv), std::string::npos) << "the environment is recorded; docs/sharing.md says it is not";

  std::string out = rec.dir.File("share.db");
  auto r = RunCmd({SyspgoBin(), "redact", rec.db, "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadAll(rec.db), before) << "the input was changed";
  std::string after = ReadAll(out);
  ASSERT_GT(after.size(), 4096u);
  for (const auto& s : rec.Secrets()) EXPECT_EQ(after.find(s), std::string::npos) << "'" << s << "' is still in it";
  EXPECT_EQ(access((out + "-wal").c_str(), F_OK), -1) << "a -wal beside the copy may hold originals";

  // Still a profile; the numbers are all there.
  auto db = OpenProfileDb(out, DbMode::kReadOnly);
  ASSERT_TRUE(db.ok()) << db.error().message;
  Db d = OpenDb(out);
  DevIno di = StatFile(rec.payload);
  EXPECT_EQ(QueryInt(d, "SELECT SUM(ret) FROM file_io WHERE nr = 1 AND ino = " + std::to_string(di.ino)), 2 * 8192);
  EXPECT_EQ(QueryRows(d, "SELECT DISTINCT path FROM file ORDER BY path"), std::vector<std::string>{""});
  auto a = RunCmd({SyspgoBin(), "analyze", out, "files"});
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.out.find("8.0 KiB"), std::string::npos) << a.out;
}

TEST(Redact, HashKeepsJoinsOnPathsAcrossTablesAndRuns) {
  Recorded rec;
  std::string out = rec.dir.File("hashed.db");
  auto r = RunCmd({SyspgoBin(), "redact", rec.db, "-o", out, "--hash", "--salt", "team-salt"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string after = ReadAll(out);
  for (const auto& s : rec.Secrets()) EXPECT_EQ(after.find(s), std::string::npos) << "'" << s << "' is still in it";
  Db d = OpenDb(out);
  DevIno di = StatFile(rec.payload);
  std::string token = RedactToken("team-salt", rec.payload);
  // The payload's path is the same token in both runs and in both tables.
  EXPECT_EQ(QueryRows(d, "SELECT run_id, path FROM file WHERE ino = " + std::to_string(di.ino) + " ORDER BY run_id"),
            (std::vector<std::string>{"1\t" + token, "2\t" + token}));
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_open WHERE path = '" + token + "' AND ino = " +
                            std::to_string(di.ino)),
            2);
  // A join on the path, as an analysis would make it, still finds the opens.
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file f JOIN file_open o ON o.run_id = f.run_id AND o.path = f.path "
                        "WHERE f.ino = " + std::to_string(di.ino)),
            2);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(DISTINCT host) FROM run"), 1);
  EXPECT_EQ(QueryRows(d, "SELECT DISTINCT host FROM run"), std::vector<std::string>{RedactToken("team-salt", kHost)});
  // Without a salt, tokens are random per file: not the salted ones.
  std::string out2 = rec.dir.File("hashed2.db");
  ASSERT_EQ(RunCmd({SyspgoBin(), "redact", rec.db, "-o", out2, "--hash"}).status, 0);
  Db d2 = OpenDb(out2);
  EXPECT_EQ(QueryInt(d2, "SELECT COUNT(*) FROM file WHERE path = '" + token + "'"), 0);
}

TEST(Redact, InPlaceReplacesTheFileAndRefusalsNameTheirInput) {
  Recorded rec;
  auto r = RunCmd({SyspgoBin(), "redact", rec.db, "--in-place"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string after = ReadAll(rec.db);
  for (const auto& s : rec.Secrets()) EXPECT_EQ(after.find(s), std::string::npos) << "'" << s << "' is still in it";
  EXPECT_EQ(RunCmd({SyspgoBin(), "analyze", rec.db, "files"}).status, 0);

  // An existing output is never overwritten.
  std::string taken = rec.dir.File("taken.db");
  std::ofstream(taken) << "keep me";
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "redact", rec.db, "-o", taken}), 1, "'" + taken + "' already exists"));
  EXPECT_EQ(ReadAll(taken), "keep me");
  // Not a profile: refused, nothing written.
  std::string notes = rec.dir.File("notes.txt"), out = rec.dir.File("notes.redacted.db");
  std::ofstream(notes) << "just some notes, not a database at all..........................................";
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "redact", notes, "-o", out}), 1,
                         "'" + notes + "' is not a syspgo profile database"));
  EXPECT_NE(access(out.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace syspgo::test
