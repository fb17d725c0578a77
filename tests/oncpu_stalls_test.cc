//===- oncpu_stalls_test.cc - pauses on a CPU, on a constructed run -----===//
// analyze/oncpu_stalls.h on the diagnose fixture (tests/data/
// diagnose_fixture.sql) with a thread added by SQL, so that which call
// waited, and for what, is exact: a real run cannot make one checkpoint's
// write wait for writeback and not the others' on demand.
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/findings_json.h"
#include "tests/sample_db_fixture.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// Two kernel functions the fixture lacks, and the stacks of waits in them:
// 13 a write held by dirty-page throttling (balance_dirty_pages), 14 a read
// of file data from disk (filemap_read < vfs_read < ksys_read). The
// fixture's symbols are 0x100 apart; a frame points 0x10 into one.
std::string Waits() {
  // The probe's program, bpf_trace_run4, __traceiter_sched_switch,
  // __schedule, schedule, io_schedule; then do_syscall_64 and the entry.
  const std::vector<uint64_t> sleep = {0xffffffffc0001000, 0xffffffff81000110, 0xffffffff81000210,
                                       0xffffffff81000310, 0xffffffff81000410, 0xffffffff81000510};
  const std::vector<uint64_t> entry = {0xffffffff81000a10, 0xffffffff81000b10};
  auto stack = [&](const std::vector<uint64_t>& in) {
    std::vector<uint64_t> f = sleep;
    f.insert(f.end(), in.begin(), in.end());
    f.insert(f.end(), entry.begin(), entry.end());
    return Frames(f);
  };
  return R"sql(
UPDATE kallsyms SET text = replace(text, 'ffffffff81001f00 T _etext',
  'ffffffff81001f00 T balance_dirty_pages' || char(10) || 'ffffffff81002000 T filemap_read' || char(10) ||
  'ffffffff81002100 T _etext');
INSERT INTO stack (run_id, id, frames) VALUES (1, 13, )sql" +
         stack({0xffffffff81001f10}) + "), (1, 14, " +
         stack({0xffffffff81002010, 0xffffffff81001210, 0xffffffff81001310}) + ");";
}

// "cause xCOUNT: title" of each finding, for a failure's message.
std::vector<std::string> Titles(const std::vector<FindingFields>& f) {
  std::vector<std::string> out;
  for (const FindingFields& x : f) out.push_back(x.at("cause") + " x" + x.at("count") + ": " + x.at("title"));
  return out;
}

// The fixture with `sql` added, and the findings of thread `comm` in it.
std::vector<FindingFields> FindingsWith(const TempDir& dir, const std::string& sql, const std::string& comm,
                                        std::string* db) {
  *db = FixtureDb(dir, "diagnose_fixture.sql");
  EXPECT_EQ(ExecSql(*db, sql), "");
  std::string error;
  std::vector<FindingFields> f = ForThread(AnalyzeStalls(*db, dir.File("stalls.json"), &error), comm);
  EXPECT_TRUE(error.empty()) << error;
  return f;
}

// saver (tid 105) checkpoints at 7.5, 8.5 and 9.5 s as the seed scenario
// does: 60 ms in getrandom for 50 MiB, then openat, one write of them and
// close. The first two writes copy on the CPU (20 ms); the third is held
// 100 ms by dirty-page throttling, and the unlink after it waits 12 ms for
// the discard of the blocks writeback gave the file. With `fsync`, each
// write is followed by an fsync that waits 30 ms for writeback.
std::string Saver(bool fsync) {
  std::string sync_ns = fsync ? "31000000" : "0";
  return Waits() + R"sql(
INSERT INTO thread (run_id, tid, pid, comm, start_ts) VALUES (1, 105, 100, 'saver', 1000);
CREATE TEMP TABLE ck AS SELECT column1 AS k, column2 AS t, column3 AS wdur, column4 AS woncpu,
  column2 + 60300000 + column3 AS wend FROM (VALUES (1, 7500000000, 20000000, 19900000),
  (2, 8500000000, 20000000, 19900000), (3, 9500000000, 120000000, 19000000));
INSERT INTO syscall_oncpu (run_id, ts, dur, oncpu, pid, tid, nr, arg0, arg1, arg2, ret)
SELECT 1, t, 60000000, 59000000, 100, 105, 318, 0, 52428800, 0, 52428800 FROM ck
UNION ALL
SELECT 1, t + 60300000, wdur, woncpu, 100, 105, 1, 4, 0, 52428800, 52428800 FROM ck;
INSERT INTO file_open (run_id, ts, dur, pid, tid, nr, path, flags, ret, dev, ino)
SELECT 1, t + 60100000, 100000, 100, 105, 257, '/data/ckpt/random-' || (5 * k) || '.bin', 577, 4, 2049, 21 FROM ck;
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret)
SELECT 1, t + 60300000, wdur, 100, 105, 1, 4, 2049, 21, 32768, 0, 52428800, 52428800 FROM ck
UNION ALL
SELECT 1, wend + 50000, )sql" + sync_ns + R"sql(, 100, 105, 74, 4, 2049, 21, 32768, -1, 0, 0 FROM ck WHERE )sql" +
         sync_ns + R"sql( > 0
UNION ALL
SELECT 1, wend + 100000 + )sql" + sync_ns + R"sql(, 10000, 100, 105, 3, 4, 2049, 21, 32768, -1, 0, 0 FROM ck;
INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts, waker_pid,
                    waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id)
SELECT 1, wend + 500000, 30000000, 100, 105, 1, 2, 1, 0, wend + 30490000, 0, 0, 'swapper/1', 7, 0 FROM ck
WHERE )sql" + sync_ns + R"sql( > 0
UNION ALL
SELECT 1, 9570000000, 100000000, 100, 105, 1, 2, 13, 0, 9669990000, 0, 0, 'swapper/1', 7, 0
UNION ALL
SELECT 1, wend + 200000 + )sql" + sync_ns + R"sql(, 12000000, 100, 105, 1, 2, 2, 0, wend + 12190000 + )sql" + sync_ns +
         R"sql(, 0, 0, 'swapper/1', 7, 0 FROM ck WHERE k = 3;
)sql";
}

// The three checkpoints are one cause: one on-CPU stall of getrandom and
// write, three times, whose third occurrence's wait (the throttled write,
// the unlink's discard) is a wait of it, not a finding of its own: no
// getrandom-only pause beside it, no I/O stall of the file.
TEST(OnCpuStalls, AThrottledWriteStaysInItsPause) {
  TempDir dir;
  std::string db;
  std::vector<FindingFields> f = FindingsWith(dir, Saver(false), "saver", &db);
  ASSERT_EQ(f.size(), 1u) << testing::PrintToString(Titles(f));
  EXPECT_EQ(f[0].at("cause"), "kernel-cpu");
  EXPECT_EQ(f[0].at("count"), "3");
  EXPECT_EQ(f[0].at("syscalls"), R"(["getrandom","write"])");
  EXPECT_EQ(f[0].at("file"), "/data/ckpt/random-<N>.bin");
  EXPECT_EQ(f[0].at("bytes_written"), "52428800");
  EXPECT_EQ(f[0].at("blocked_ns"), "112000000");
  // The occurrence that waited says what for; the others do not.
  CmdResult v = RunCmd({SyspgoBin(), "analyze", db, "stalls", "-v"});
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_NE(v.out.find("at 7.500 s: 80.30 ms, on-CPU 78.90 ms, tid 105"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("waiting 112.00 ms (most for dirty-page throttling"), std::string::npos) << v.out;
}

// The same checkpoints made durable: an fsync after each write, which
// waits for the disk. That wait is one the program asked for: each
// checkpoint is the I/O stall of its file, the pause before the fsync part
// of it, as in the fsync variant of examples/checkpoint_stall.
TEST(OnCpuStalls, ASyncedCheckpointIsAnIoStall) {
  TempDir dir;
  std::string db;
  std::vector<FindingFields> f = FindingsWith(dir, Saver(true), "saver", &db);
  ASSERT_EQ(f.size(), 1u) << testing::PrintToString(Titles(f));
  EXPECT_EQ(f[0].at("cause"), "io");
  EXPECT_EQ(f[0].at("count"), "3");
  EXPECT_NE(f[0].at("syscalls").find("fsync"), std::string::npos) << f[0].at("syscalls");
}

// reader (tid 106) reads a file it opened at 7 s in 4 MiB reads from
// 7.5 s: three from the page cache, 15 ms each on the CPU, then five that
// wait 40 ms each for the disk. The first waiting read ends the pause of
// the cached ones, but the reads after it are I/O of their own: the whole
// read is the I/O stall of the file, not a pause on the CPU that took the
// disk's time with it.
TEST(OnCpuStalls, ReadsThatGoOnWaitingAreAnIoStall) {
  TempDir dir;
  std::string db;
  std::vector<FindingFields> f = FindingsWith(dir, Waits() + R"sql(
INSERT INTO thread (run_id, tid, pid, comm, start_ts) VALUES (1, 106, 100, 'reader', 1000);
INSERT INTO file_open (run_id, ts, dur, pid, tid, nr, path, flags, ret, dev, ino)
  VALUES (1, 7000000000, 100000, 100, 106, 257, '/data/shards/shard-1.bin', 0, 5, 2049, 31);
CREATE TEMP TABLE rd AS SELECT column1 AS i, column2 AS ts, column3 AS dur, column4 AS oncpu FROM (VALUES
  (0, 7500100000, 15000000, 14900000), (1, 7515200000, 15000000, 14900000), (2, 7530300000, 15000000, 14900000),
  (3, 7545400000, 41000000, 1500000), (4, 7586500000, 41000000, 1500000), (5, 7627600000, 41000000, 1500000),
  (6, 7668700000, 41000000, 1500000), (7, 7709800000, 41000000, 1500000));
INSERT INTO syscall_oncpu (run_id, ts, dur, oncpu, pid, tid, nr, arg0, arg1, arg2, ret)
SELECT 1, ts, dur, oncpu, 100, 106, 0, 5, 0, 4194304, 4194304 FROM rd;
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret)
SELECT 1, ts, dur, 100, 106, 0, 5, 2049, 31, 32768, i * 4194304, 4194304, 4194304 FROM rd;
INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts, waker_pid,
                    waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id)
SELECT 1, ts + 500000, 40000000, 100, 106, 1, 2, 14, 0, ts + 40490000, 0, 0, 'swapper/1', 7, 0 FROM rd WHERE i >= 3;
)sql",
                                              "reader", &db);
  ASSERT_EQ(f.size(), 1u) << testing::PrintToString(Titles(f));
  EXPECT_EQ(f[0].at("cause"), "io");
  EXPECT_EQ(f[0].at("file"), "/data/shards/shard-1.bin");
  EXPECT_EQ(f[0].at("blocked_ns"), "200000000");
}

// opener (tid 109) checkpoints at 7.5, 8.5 and 9.5 s: 60 ms in getrandom,
// then the file's openat, then 20 ms in one write. At 8.5 s the openat
// sleeps 4 ms (the journal, on a busy disk), under the 10 ms bar: a wait
// that is no stall, inside the checkpoint, does not cut it in two; the
// three are one cause.
TEST(OnCpuStalls, AShortSleepBetweenTheCallsStaysInThePause) {
  TempDir dir;
  std::string db;
  std::vector<FindingFields> f = FindingsWith(dir, Waits() + R"sql(
INSERT INTO thread (run_id, tid, pid, comm, start_ts) VALUES (1, 109, 100, 'opener', 1000);
CREATE TEMP TABLE op AS SELECT column1 AS k, column2 AS t, column3 AS nap FROM (VALUES
  (1, 7500000000, 0), (2, 8500000000, 4000000), (3, 9500000000, 0));
INSERT INTO syscall_oncpu (run_id, ts, dur, oncpu, pid, tid, nr, arg0, arg1, arg2, ret)
SELECT 1, t, 60000000, 59000000, 100, 109, 318, 0, 52428800, 0, 52428800 FROM op
UNION ALL
SELECT 1, t + 60300000 + nap, 20000000, 19900000, 100, 109, 1, 4, 0, 52428800, 52428800 FROM op;
INSERT INTO file_open (run_id, ts, dur, pid, tid, nr, path, flags, ret, dev, ino)
SELECT 1, t + 60100000, 100000 + nap, 100, 109, 257, '/data/ckpt/opened-' || k || '.bin', 577, 4, 2049, 41 FROM op;
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret)
SELECT 1, t + 60300000 + nap, 20000000, 100, 109, 1, 4, 2049, 41, 32768, 0, 52428800, 52428800 FROM op;
INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts, waker_pid,
                    waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id)
SELECT 1, t + 60150000, nap, 100, 109, 1, 2, 1, 0, t + 60150000 + nap, 0, 0, 'jbd2/sda1-8', 0, 0 FROM op WHERE nap > 0;
)sql",
                                              "opener", &db);
  ASSERT_EQ(f.size(), 1u) << testing::PrintToString(Titles(f));
  EXPECT_EQ(f[0].at("cause"), "kernel-cpu");
  EXPECT_EQ(f[0].at("count"), "3");
  EXPECT_EQ(f[0].at("syscalls"), R"(["getrandom","write"])");
}

// unmapper (tid 107) and freer (tid 108) each spend 14 ms in one munmap
// at 7.5 s. freer's is on the CPU throughout: a pause of its own. Other
// tasks had unmapper's CPU for 9.5 ms of its call (a preemption, recorded
// runnable): its own work was 4.5 ms, under the 10 ms bar, and the time it
// lost is the machine's contention, not the kernel's work in munmap.
TEST(OnCpuStalls, TimeRunnableWithoutACpuIsNoPauseOfTheCall) {
  TempDir dir;
  std::string sql = R"sql(
INSERT INTO thread (run_id, tid, pid, comm, start_ts) VALUES (1, 107, 100, 'unmapper', 1000),
  (1, 108, 100, 'freer', 1000);
INSERT INTO syscall_oncpu (run_id, ts, dur, oncpu, pid, tid, nr, arg0, arg1, arg2, ret)
  VALUES (1, 7500000000, 14000000, 4500000, 100, 107, 11, 0, 52428800, 0, 0),
         (1, 7500000000, 14000000, 13900000, 100, 108, 11, 0, 52428800, 0, 0);
INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts, waker_pid,
                    waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id)
  VALUES (1, 7502000000, 9500000, 100, 107, 1, 0, 1, 0, 0, 0, 0, '', 0, 0);
)sql";
  std::string db;
  std::vector<FindingFields> unmapper = FindingsWith(dir, sql, "unmapper", &db);
  EXPECT_TRUE(unmapper.empty()) << testing::PrintToString(Titles(unmapper));
  std::string error;
  std::vector<FindingFields> freer = ForThread(AnalyzeStalls(db, dir.File("again.json"), &error), "freer");
  ASSERT_EQ(freer.size(), 1u) << error << testing::PrintToString(Titles(freer));
  EXPECT_EQ(freer[0].at("cause"), "kernel-cpu");
  EXPECT_EQ(freer[0].at("syscalls"), R"(["munmap"])");
}

}  // namespace
}  // namespace syspgo::test
