//===- sched_test.cc - the sched group on the real kernel ----------------===//
// tests/workloads/pipe_wait blocks a reader thread on an empty pipe until a
// writer thread writes to it at least 200 ms later. The off-CPU interval of
// the reader must last that long, have left in pipe_read (its kernel stack,
// symbolized with the kallsyms the cpu group stored with the run) and name
// the writer, with its pipe_write stack, as the waker.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// Frames of stack `id` of the run (stack.frames: 8-byte little-endian IPs).
std::vector<uint64_t> StackFrames(Db& db, int64_t id) {
  auto rows = QueryRows(db, "SELECT hex(frames) FROM stack WHERE id = " + std::to_string(id));
  std::vector<uint64_t> out;
  if (rows.empty()) return out;
  const std::string& hex = rows[0];
  for (size_t i = 0; i + 16 <= hex.size(); i += 16) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = v << 8 | std::stoul(hex.substr(i + 2 * b, 2), nullptr, 16);
    out.push_back(v);
  }
  return out;
}

std::string SymbolizedStack(Db& db, const Kallsyms& ks, int64_t id) {
  std::string out;
  for (uint64_t ip : StackFrames(db, id)) out += ks.Name(ip) + " ";
  return out;
}

std::vector<std::string> SplitTabs(const std::string& row) {
  std::vector<std::string> out;
  std::istringstream in(row);
  for (std::string f; std::getline(in, f, '\t');) out.push_back(f);
  return out;
}

TEST(Sched, PipeReaderOffCpuUntilWriterWakesIt) {
  TempDir dir;
  std::string db_path = dir.File("run.db");
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "sched,cpu", "-o", db_path, "--",
                   std::string(SYSPGO_WORKLOADS_BIN) + "/pipe_wait", "200"});
  ASSERT_EQ(r.status, 0) << r.err;
  int reader = 0, writer = 0;
  ASSERT_EQ(sscanf(r.out.c_str(), "reader=%d writer=%d", &reader, &writer), 2) << r.out;

  Db db = OpenDb(db_path);
  EXPECT_EQ(QueryInt(db, "SELECT attached FROM run_probe WHERE probe_group = 'sched'"), 1);
  int64_t pid = QueryInt(db, "SELECT target_pid FROM run");
  // The kernel keeps only intervals at or above --offcpu-min (1 ms by default).
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM offcpu WHERE dur < 1000000"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM offcpu WHERE pid != " + std::to_string(pid)), 0);

  auto rows = QueryRows(db,
                        "SELECT dur, state, kernel_stack_id, user_stack_id, pid, wake_ts - ts, waker_pid, waker_tid, "
                        "waker_comm, waker_kernel_stack_id, waker_user_stack_id FROM offcpu WHERE tid = " +
                            std::to_string(reader) + " ORDER BY dur DESC");
  ASSERT_FALSE(rows.empty()) << "no off-CPU interval for the reader thread " << reader;
  auto f = SplitTabs(rows[0]);
  ASSERT_EQ(f.size(), 11u) << rows[0];
  int64_t dur = std::stoll(f[0]);
  EXPECT_GE(dur, 200000000) << "the reader slept at least 200 ms";
  EXPECT_LT(dur, 5000000000);
  EXPECT_EQ(f[1], "1") << "pipe_read sleeps interruptibly (TASK_INTERRUPTIBLE)";
  EXPECT_EQ(std::stoll(f[4]), pid);
  // Woken close to the end of the interval, not at its start.
  EXPECT_GE(std::stoll(f[5]), 200000000);
  EXPECT_LE(std::stoll(f[5]), dur);
  EXPECT_EQ(std::stoll(f[6]), pid);
  EXPECT_EQ(std::stoll(f[7]), writer);
  EXPECT_EQ(f[8], "pipe-writer");

  Kallsyms ks(RunKallsymsText(db));
  ASSERT_GT(ks.size(), 0u) << "the run has no copy of the kernel symbols its stacks need";
  // It keeps only those, and every kernel frame of the run's stacks names
  // the symbol the whole /proc/kallsyms gives it, leaving out JIT-ed BPF
  // programs and trampolines as the collector and symbolizer do.
  std::string text;
  std::istringstream lines(ReadAll("/proc/kallsyms"));
  for (std::string line; std::getline(lines, line);)
    if (!line.ends_with("\t[bpf]") && !line.ends_with("\t[__builtin__ftrace]")) text += line + "\n";
  Kallsyms all(text);
  EXPECT_LT(ks.size() * 20, all.size());
  size_t kernel_frames = 0;
  for (const std::string& id : QueryRows(db, "SELECT id FROM stack"))
    for (uint64_t ip : StackFrames(db, std::stoll(id)))
      if (ip >> 63) {
        ++kernel_frames;
        EXPECT_EQ(ks.Name(ip), all.Name(ip)) << std::hex << ip;
      }
  EXPECT_GT(kernel_frames, 0u);
  std::string sleep_stack = SymbolizedStack(db, ks, std::stoll(f[2]));
  EXPECT_NE(sleep_stack.find("pipe_read "), std::string::npos) << sleep_stack;
  EXPECT_NE(sleep_stack.find("schedule"), std::string::npos) << sleep_stack;
  std::string wake_stack = SymbolizedStack(db, ks, std::stoll(f[9]));
  EXPECT_NE(wake_stack.find("pipe_write "), std::string::npos) << wake_stack;
  // Both threads are traced: their user stacks were taken too.
  EXPECT_FALSE(StackFrames(db, std::stoll(f[3])).empty());
  EXPECT_FALSE(StackFrames(db, std::stoll(f[10])).empty());
}

}  // namespace
}  // namespace syspgo::test
