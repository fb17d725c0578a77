//===- stall_rules_test.cc - each wait class: how it is known, what it says ===//
// The rule table of analyze/stall_rules.h on its own, without a database:
// kernel stacks as lists of frame names (innermost first, as StackNames
// gives them), syscall names and file types go in; the class and the words
// of the wait, a finding's title, its fix and a critical path's hop text
// come out. The stalls pass on real runs and on the fixture is tested in
// diagnose_test; this pins down every rule, which ones win when several
// match, and what happens when nothing does.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/stall_rules.h"

namespace syspgo::test {
namespace {

using Frames = std::vector<std::string>;

Wait Blocked(const Frames& k, const std::string& syscall = "", int64_t file_type = 0) {
  return ClassifyWait(true, k, syscall, file_type);
}

// --- the table itself -----------------------------------------------------

TEST(StallRules, EveryClassHasOneRowThatNamesIt) {
  std::set<std::string> names;
  std::set<WaitClass> classes;
  for (const WaitRule& r : WaitRules()) {
    EXPECT_TRUE(classes.insert(r.cls).second) << "two rows for " << r.name;
    EXPECT_TRUE(names.insert(r.name).second) << "two rows named " << r.name;
    EXPECT_EQ(RuleOf(r.cls).name, std::string(r.name));
  }
  EXPECT_EQ(classes.size(), static_cast<size_t>(WaitClass::kOther) + 1);
  EXPECT_EQ(names, (std::set<std::string>{"io", "lock", "sleep", "pipe", "poll", "socket", "child", "device",
                                          "kernel-lock", "page-fault", "cpu", "other"}));
}

TEST(StallRules, OnlyDiskClassesHaveBlockRequestsAttributed) {
  for (const WaitRule& r : WaitRules()) {
    bool disk = r.cls == WaitClass::kIo || r.cls == WaitClass::kPageFault;
    EXPECT_EQ(r.disk, disk) << r.name;
  }
}

TEST(StallRules, EveryRowHasAFixForAnyStallAndATitle) {
  for (const WaitRule& r : WaitRules()) {
    ASSERT_NE(r.fixes.size(), 0u) << r.name;
    EXPECT_EQ((r.fixes.end() - 1)->when, FixWhen::kAlways) << r.name << ": its last fix must apply to any stall";
    EXPECT_NE(r.title, nullptr) << r.name;
    EXPECT_NE(r.doing, nullptr) << r.name;
    EXPECT_NE(r.what, nullptr) << r.name;
    EXPECT_EQ(r.file_types.size() != 0, r.file_what != nullptr) << r.name;
  }
}

// Every template names only fields its reader fills: an unknown or
// misspelt field would vanish from the text without a trace.
TEST(StallRules, TemplatesUseOnlyKnownFields) {
  auto fields = [](const char* text) {
    std::set<std::string> out;
    FillWords(text, [&](std::string_view f) {
      out.insert(std::string(f));
      return std::string("x");
    });
    return out;
  };
  const std::set<std::string> words = {"who", "ops", "file", "what", "waker", "saves", "each"};
  auto within = [](const std::set<std::string>& used, const std::set<std::string>& known, const std::string& where) {
    for (const std::string& f : used) EXPECT_TRUE(known.count(f)) << where << " uses {" << f << "}";
  };
  for (const WaitRule& r : WaitRules()) {
    std::string n = r.name;
    within(fields(r.what), {"waiter"}, n + " what");
    for (const WhatSign& s : r.signs) within(fields(s.what), {"waiter"}, n + " sign");
    if (r.file_what) within(fields(r.file_what), {}, n + " file_what");
    within(fields(r.doing), {"ops", "what", "file"}, n + " doing");
    within(fields(r.title), words, n + " title");
    if (r.file_op_title) within(fields(r.file_op_title), words, n + " file_op_title");
    for (const FixText& f : r.fixes) within(fields(f.text), words, n + " fix");
  }
}

// --- filling templates ----------------------------------------------------

TEST(StallRules, FillWordsAddsPrefixesOnlyToValuesAndFallsBackWhenEmpty) {
  auto field = [](std::string_view f) { return f == "ops" ? std::string("fsync") : std::string(); };
  EXPECT_EQ(FillWords("stalls{ in ops}", field), "stalls in fsync");
  EXPECT_EQ(FillWords("stalls{ of file}", field), "stalls");
  EXPECT_EQ(FillWords("move {file|the I/O}", field), "move the I/O");
  EXPECT_EQ(FillWords("move {ops|the I/O}", field), "move fsync");
  EXPECT_EQ(FillWords("{an event in file|nothing shown}", field), "nothing shown");
  EXPECT_EQ(FillWords("no fields", field), "no fields");
  EXPECT_EQ(FillWords("", field), "");
  EXPECT_EQ(FillWords("open {ops", field), "open {ops");  // no closing brace: left as it is
}

// --- recognising a wait by its kernel stack -------------------------------

TEST(StallRules, PreemptionIsAWaitForACpuWhateverTheStack) {
  Wait w = ClassifyWait(false, {"schedule", "futex_wait", "do_futex"}, "futex", S_IFIFO);
  EXPECT_EQ(w.cls, WaitClass::kCpu);
  EXPECT_EQ(w.what, "a CPU: the thread was runnable, but other tasks had the CPUs");
  EXPECT_EQ(ClassifyWait(false, {}, "", 0).cls, WaitClass::kCpu);
}

TEST(StallRules, DiskWaitsAreNamedByTheirPhase) {
  struct Case {
    Frames k;
    std::string what;
  };
  const std::vector<Case> cases = {
      {{"io_schedule", "balance_dirty_pages", "balance_dirty_pages_ratelimited_flags", "generic_perform_write"},
       "dirty-page throttling: the kernel held the writer until writeback caught up (balance_dirty_pages)"},
      {{"io_schedule", "folio_wait_bit_common", "folio_wait_writeback", "__filemap_fdatawait_range",
        "file_write_and_wait_range", "ext4_sync_file", "__x64_sys_fsync"},
       "writeback of the file's dirty pages to disk"},
      {{"io_schedule", "bit_wait_io", "submit_bio_wait", "blkdev_issue_flush", "ext4_sync_file"},
       "the disk to flush its write cache"},
      {{"io_schedule", "submit_bio_wait", "blkdev_issue_discard", "ext4_trim_fs"}, "discard (TRIM) of the freed blocks"},
      {{"schedule", "jbd2_log_wait_commit", "ext4_sync_file"}, "the filesystem journal"},
      {{"io_schedule", "folio_wait_bit_common", "filemap_fault", "__do_fault", "do_read_fault", "handle_mm_fault",
        "exc_page_fault", "asm_exc_page_fault"},
       "a page of a mapped file read from disk, in a page fault"},
      {{"io_schedule", "folio_wait_bit_common", "filemap_get_pages", "filemap_read", "vfs_read"},
       "file data read from disk"},
      {{"io_schedule", "bit_wait_io", "__wait_on_bit", "out_of_line_wait_on_bit", "__wait_on_buffer", "ext4_read_bh",
        "ext4_lookup"},
       "filesystem metadata I/O in __wait_on_buffer"},
      {{"io_schedule", "blk_mq_get_tag", "__blk_mq_alloc_requests"}, "block I/O in blk_mq_get_tag"},
      {{"io_schedule"}, "block I/O"},  // no frame but the scheduler's: no waiter to name
  };
  for (const Case& c : cases) {
    Wait w = Blocked(c.k, "read", S_IFSOCK);  // frames win over the syscall and the file
    EXPECT_EQ(w.cls, WaitClass::kIo) << c.what;
    EXPECT_EQ(w.what, c.what);
  }
}

TEST(StallRules, WaitsThatAreNotIoAreKnownByTheirFrames) {
  struct Case {
    Frames k;
    WaitClass cls;
    std::string what;
  };
  const std::vector<Case> cases = {
      {{"schedule", "futex_wait_queue", "futex_wait", "do_futex", "__x64_sys_futex"}, WaitClass::kLock,
       "a futex: a mutex, condition variable or thread join"},
      {{"schedule", "do_nanosleep", "hrtimer_nanosleep", "__x64_sys_clock_nanosleep"}, WaitClass::kSleep,
       "a timer: the thread slept"},
      {{"schedule", "pipe_read", "vfs_read"}, WaitClass::kPipe, "data in a pipe: its writer had not written yet"},
      {{"schedule", "anon_pipe_write", "vfs_write"}, WaitClass::kPipe, "room in a full pipe: its reader was behind"},
      {{"schedule", "schedule_hrtimeout_range", "do_epoll_wait", "__x64_sys_epoll_wait"}, WaitClass::kPoll,
       "an event on file descriptors (poll, select or epoll)"},
      {{"schedule", "schedule_timeout", "wait_woken", "sk_wait_data", "tcp_recvmsg"}, WaitClass::kSocket,
       "a socket: data to receive or room to send"},
      {{"schedule", "do_wait", "kernel_wait4", "__do_sys_wait4"}, WaitClass::kChild, "a child process to exit"},
      {{"schedule", "schedule_timeout", "wait_woken", "n_tty_read", "tty_read"}, WaitClass::kDevice, "terminal input"},
      {{"schedule", "schedule_preempt_disabled", "__mutex_lock", "mutex_lock", "do_unlinkat"}, WaitClass::kKernelLock,
       "a kernel lock held by another task, in __mutex_lock"},
      {{"schedule", "rwsem_down_read_slowpath", "down_read", "lock_mm_and_find_vma", "exc_page_fault",
        "asm_exc_page_fault"},
       WaitClass::kKernelLock, "a kernel lock held by another task, in rwsem_down_read_slowpath"},
      {{"schedule", "folio_wait_bit_common", "__folio_lock_or_retry", "do_swap_page", "handle_mm_fault",
        "exc_page_fault", "asm_exc_page_fault"},
       WaitClass::kPageFault, "a page fault, in __folio_lock_or_retry"},
  };
  for (const Case& c : cases) {
    Wait w = Blocked(c.k);
    EXPECT_EQ(w.cls, c.cls) << c.what;
    EXPECT_EQ(w.what, c.what);
  }
}

TEST(StallRules, TheFirstRowWhoseFramesMatchWins) {
  // The rows are tried in table order: the disk before a futex, a futex
  // before a sleep, a kernel lock before a page fault.
  EXPECT_EQ(Blocked({"io_schedule", "futex_wait"}).cls, WaitClass::kIo);
  EXPECT_EQ(Blocked({"schedule", "do_nanosleep", "futex_wait"}).cls, WaitClass::kLock);
  // A lock taken in a page fault is the lock.
  EXPECT_EQ(Blocked({"schedule", "down_read", "exc_page_fault"}).cls, WaitClass::kKernelLock);
  // Frames beat the syscall: a pipe read in a futex syscall is the pipe.
  EXPECT_EQ(Blocked({"schedule", "pipe_read"}, "futex").cls, WaitClass::kPipe);
}

// --- recognising a wait without telling frames ----------------------------

TEST(StallRules, WithoutTellingFramesTheSyscallSaysWhatItIs) {
  struct Case {
    std::string syscall;
    WaitClass cls;
  };
  const std::vector<Case> cases = {
      {"nanosleep", WaitClass::kSleep},    {"clock_nanosleep", WaitClass::kSleep}, {"futex", WaitClass::kLock},
      {"epoll_wait", WaitClass::kPoll},    {"epoll_pwait2", WaitClass::kPoll},     {"poll", WaitClass::kPoll},
      {"ppoll", WaitClass::kPoll},         {"select", WaitClass::kPoll},           {"pselect6", WaitClass::kPoll},
      {"wait4", WaitClass::kChild},        {"waitid", WaitClass::kChild},
  };
  for (const Case& c : cases) {
    Wait w = Blocked({"schedule", "unknown_wait"}, c.syscall, S_IFREG);  // the syscall beats the file
    EXPECT_EQ(w.cls, c.cls) << c.syscall;
    EXPECT_EQ(w.what, RuleOf(c.cls).what) << c.syscall;
  }
  // Names are whole unless the rule says a prefix: "pollx" is no poll.
  EXPECT_EQ(Blocked({}, "pollx").cls, WaitClass::kOther);
  EXPECT_EQ(Blocked({}, "futex_waitv").cls, WaitClass::kOther);
}

TEST(StallRules, WithoutFramesOrSyscallTheFileTypeSaysWhatItIs) {
  struct Case {
    int64_t type;
    WaitClass cls;
    std::string what;
  };
  const std::vector<Case> cases = {
      {S_IFIFO, WaitClass::kPipe, "a pipe"},
      {S_IFSOCK, WaitClass::kSocket, "a socket: data to receive or room to send"},
      {S_IFCHR, WaitClass::kDevice, "a device"},
      {S_IFREG, WaitClass::kIo, "file I/O"},
      {S_IFBLK, WaitClass::kIo, "file I/O"},
  };
  for (const Case& c : cases) {
    Wait w = Blocked({}, "read", c.type | 0644);  // permission bits do not count
    EXPECT_EQ(w.cls, c.cls) << c.what;
    EXPECT_EQ(w.what, c.what);
  }
  EXPECT_EQ(Blocked({}, "read", S_IFDIR).cls, WaitClass::kOther);
}

TEST(StallRules, AWaitNothingRecognisesIsOtherAndNamesItsWaiter) {
  Wait w = Blocked({"schedule", "schedule_timeout", "some_driver_wait", "some_driver_ioctl"}, "ioctl");
  EXPECT_EQ(w.cls, WaitClass::kOther);
  EXPECT_EQ(w.what, "an event in some_driver_wait");
  // An empty stack (no kallsyms) and nothing else known.
  w = Blocked({});
  EXPECT_EQ(w.cls, WaitClass::kOther);
  EXPECT_EQ(w.what, "an event the recorded stacks do not show");
  // Only scheduler frames: no waiter either.
  EXPECT_EQ(Blocked({"__schedule", "schedule", "schedule_timeout"}).what, "an event the recorded stacks do not show");
}

// --- the stack helpers ----------------------------------------------------

TEST(StallRules, StackSyscallIsTheOutermostSysFrame) {
  EXPECT_EQ(StackSyscall({"schedule", "do_nanosleep", "__x64_sys_clock_nanosleep", "do_syscall_64"}),
            "clock_nanosleep");
  EXPECT_EQ(StackSyscall({"schedule", "__do_sys_wait4", "__se_sys_wait4", "__x64_sys_wait4"}), "wait4");
  EXPECT_EQ(StackSyscall({"schedule", "__ia32_sys_read"}), "read");
  EXPECT_EQ(StackSyscall({"schedule", "exc_page_fault", "asm_exc_page_fault"}), "");
  EXPECT_EQ(StackSyscall({}), "");
}

TEST(StallRules, WaiterSkipsTheSchedulersFrames) {
  EXPECT_EQ(Waiter({"__schedule", "schedule", "io_schedule", "bit_wait_io", "__wait_on_buffer"}), "__wait_on_buffer");
  EXPECT_EQ(Waiter({"schedule"}), "");
  EXPECT_EQ(Waiter({}), "");
}

TEST(StallRules, InPageFaultAndHasFrameMatchPrefixes) {
  EXPECT_TRUE(InPageFault({"schedule", "handle_mm_fault", "exc_page_fault", "asm_exc_page_fault"}));
  EXPECT_FALSE(InPageFault({"schedule", "do_nanosleep"}));
  EXPECT_FALSE(InPageFault({}));
  EXPECT_TRUE(HasFrame({"schedule", "jbd2_log_wait_commit"}, {"jbd2_"}));
  EXPECT_FALSE(HasFrame({"schedule", "xjbd2_"}, {"jbd2_"}));
}

// --- a finding's title ----------------------------------------------------

StallWords Words() {
  StallWords w;
  w.who = "app (main thread)";
  w.ops = "write+fsync";
  w.file = "/data/ckpt-<N>.bin";
  w.what = "writeback of the file's dirty pages to disk";
  w.waker = "kworker (pid 9)";
  w.saves = "That saves up to 2.0 s.";
  w.each = "4.0 MiB each time";
  return w;
}

// A wait class and the text a rule gives it (a title, the start of a fix).
struct ClassText {
  WaitClass cls;
  std::string text;
};

TEST(StallRules, TitlesSayWhatTheThreadWaitedFor) {
  StallWords w = Words();
  const std::vector<ClassText> cases = {
      {WaitClass::kIo, "app (main thread) stalls in write+fsync waiting for " + w.what + ": /data/ckpt-<N>.bin"},
      {WaitClass::kPageFault, "app (main thread) stalls in write+fsync waiting for " + w.what + ": /data/ckpt-<N>.bin"},
      {WaitClass::kLock, "app (main thread) waits on a lock or condition (futex)"},
      {WaitClass::kSleep, "app (main thread) sleeps in write+fsync"},
      {WaitClass::kPipe, "app (main thread) waits on a pipe in write+fsync"},
      {WaitClass::kSocket, "app (main thread) waits on a socket in write+fsync"},
      {WaitClass::kPoll, "app (main thread) waits for events in write+fsync"},
      {WaitClass::kChild, "app (main thread) waits for a child process in write+fsync"},
      {WaitClass::kKernelLock, "app (main thread) waits for a kernel lock in write+fsync"},
      {WaitClass::kCpu, "app (main thread) is runnable but waits for a CPU (preempted)"},
      {WaitClass::kDevice, "app (main thread) waits in write+fsync for " + w.what},
      {WaitClass::kOther, "app (main thread) waits in write+fsync for " + w.what},
  };
  for (const ClassText& c : cases) EXPECT_EQ(StallTitle(c.cls, false, w), c.text) << WaitClassName(c.cls);
}

TEST(StallRules, TitlesOfFileOperationsNameTheFileAndItsBytes) {
  StallWords w = Words();
  EXPECT_EQ(StallTitle(WaitClass::kIo, true, w),
            "app (main thread) stalls in write+fsync of /data/ckpt-<N>.bin, 4.0 MiB each time");
  EXPECT_EQ(StallTitle(WaitClass::kKernelLock, true, w),
            "app (main thread) stalls in write+fsync of /data/ckpt-<N>.bin, 4.0 MiB each time");
  // Classes without a title of their own for file operations keep theirs.
  EXPECT_EQ(StallTitle(WaitClass::kSleep, true, w), StallTitle(WaitClass::kSleep, false, w));
  w.each.clear();
  EXPECT_EQ(StallTitle(WaitClass::kIo, true, w), "app (main thread) stalls in write+fsync of /data/ckpt-<N>.bin");
}

TEST(StallRules, TitlesLeaveOutWhatIsNotKnown) {
  StallWords w = Words();
  w.ops.clear();
  w.file.clear();
  EXPECT_EQ(StallTitle(WaitClass::kIo, false, w), "app (main thread) stalls waiting for " + w.what);
  EXPECT_EQ(StallTitle(WaitClass::kSleep, false, w), "app (main thread) sleeps");
  EXPECT_EQ(StallTitle(WaitClass::kOther, false, w), "app (main thread) waits for " + w.what);
}

// --- a finding's fix ------------------------------------------------------

TEST(StallRules, DiskFixesDependOnWhatTheStallDidToItsFile) {
  StallWords w = Words();
  std::string writes = StallFix(WaitClass::kIo, FixWhen::kWritesFile, w);
  EXPECT_TRUE(writes.starts_with("Take the write+fsync of /data/ckpt-<N>.bin off app (main thread): hand the data "
                                 "to a background writer thread"))
      << writes;
  EXPECT_TRUE(writes.ends_with(" That saves up to 2.0 s.")) << writes;

  std::string reads = StallFix(WaitClass::kIo, FixWhen::kReadsFile, w);
  EXPECT_TRUE(reads.starts_with("Read /data/ckpt-<N>.bin before app (main thread) needs it:")) << reads;
  EXPECT_NE(reads.find("posix_fadvise(WILLNEED)"), std::string::npos) << reads;

  std::string other = StallFix(WaitClass::kIo, FixWhen::kAlways, w);
  EXPECT_EQ(other, "Move the write+fsync of /data/ckpt-<N>.bin off app (main thread) (a background thread), or use "
                   "faster storage. That saves up to 2.0 s.");
  w.ops.clear();
  w.file.clear();
  EXPECT_EQ(StallFix(WaitClass::kIo, FixWhen::kAlways, w),
            "Move the I/O off app (main thread) (a background thread), or use faster storage. That saves up to 2.0 s.");
}

TEST(StallRules, MappedPagesAreToBePrefetched) {
  StallWords w = Words();
  w.what = Blocked({"io_schedule", "filemap_fault", "exc_page_fault"}).what;
  std::string io = StallFix(WaitClass::kIo, FixWhen::kAlways, w);
  EXPECT_TRUE(io.starts_with("The thread waits for pages of /data/ckpt-<N>.bin to be read from disk")) << io;
  EXPECT_NE(io.find("madvise(MADV_WILLNEED)"), std::string::npos) << io;
  // A page-fault wait gets that fix whatever its operation did.
  EXPECT_EQ(StallFix(WaitClass::kPageFault, FixWhen::kWritesFile, w), io);
  w.file.clear();
  EXPECT_TRUE(StallFix(WaitClass::kPageFault, FixWhen::kAlways, w).starts_with("The thread waits for pages of a "
                                                                              "mapped file to be read"));
  // An operation that wrote the file: taking it off the thread comes first.
  EXPECT_TRUE(StallFix(WaitClass::kIo, FixWhen::kWritesFile, w).starts_with("Take the "));
}

TEST(StallRules, FixesOfWaitsThatAreNotIoSaySoAndNameTheWaker) {
  StallWords w = Words();
  const std::vector<ClassText> cases = {
      {WaitClass::kLock, "The thread waits on a futex that kworker (pid 9) released:"},
      {WaitClass::kSleep, "The thread sleeps on purpose (write+fsync):"},
      {WaitClass::kPipe, "The thread waits for the other end of a pipe (kworker (pid 9)):"},
      {WaitClass::kSocket, "The thread waits on a socket (kworker (pid 9)):"},
      {WaitClass::kPoll, "The thread waits for events in write+fsync: idle time of an event loop."},
      {WaitClass::kChild, "The thread waits for a child process to finish (kworker (pid 9))."},
  };
  for (const ClassText& c : cases) {
    std::string fix = StallFix(c.cls, FixWhen::kWritesFile, w);  // not a disk class: the file's use does not count
    EXPECT_TRUE(fix.starts_with(c.text)) << fix;
    EXPECT_TRUE(fix.ends_with(" This is not I/O: no disk is involved.")) << fix;
  }
  EXPECT_EQ(StallFix(WaitClass::kKernelLock, FixWhen::kAlways, w),
            "The thread waits for a kernel lock another task held (kworker (pid 9)): look at what that task does with "
            "the same file or object at the same time.");
  EXPECT_EQ(StallFix(WaitClass::kCpu, FixWhen::kAlways, w),
            "The thread was ready to run, but other tasks had the CPUs: run less beside it, give it more CPUs, or "
            "raise its priority (nice, cgroup cpu.weight). That saves up to 2.0 s. This is not I/O.");
  w.what = "an event in some_driver_wait";
  for (WaitClass c : {WaitClass::kOther, WaitClass::kDevice})
    EXPECT_EQ(StallFix(c, FixWhen::kAlways, w),
              "The thread waits for an event in some_driver_wait (woken by kworker (pid 9)): look at what that task "
              "does first.");
}

// --- a hop of a critical path ---------------------------------------------

TEST(StallRules, DoingNamesTheSyscallAndTheFileOnlyWhereTheyMatter) {
  int asked = 0;
  auto file = [&] {
    ++asked;
    return std::string("/data/ckpt.bin");
  };
  Wait io = Blocked({"io_schedule", "folio_wait_writeback"});
  EXPECT_EQ(WaitDoing(io, "fsync", file), "waits for writeback of the file's dirty pages to disk of /data/ckpt.bin");
  EXPECT_EQ(asked, 1);
  Wait fault = Blocked({"schedule", "__folio_lock_or_retry", "exc_page_fault"});
  EXPECT_EQ(WaitDoing(fault, "", file), "waits for a page fault of /data/ckpt.bin");
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(WaitDoing(Blocked({"futex_wait"}), "futex", file), "waits on a futex in futex");
  EXPECT_EQ(WaitDoing(Blocked({"do_nanosleep"}), "", file), "sleeps");
  EXPECT_EQ(WaitDoing(Blocked({"pipe_read"}), "read", file), "waits on a pipe in read");
  EXPECT_EQ(WaitDoing(Blocked({}, "", S_IFSOCK), "recvfrom", file), "waits on a socket in recvfrom");
  EXPECT_EQ(WaitDoing(Blocked({"ep_poll"}), "epoll_wait", file), "waits for events in epoll_wait");
  EXPECT_EQ(WaitDoing(Blocked({"do_wait"}), "wait4", file), "waits for a child process in wait4");
  EXPECT_EQ(WaitDoing(Blocked({"tty_read"}), "read", file), "waits on a device in read");
  EXPECT_EQ(WaitDoing(Blocked({"schedule", "__mutex_lock"}), "unlink", file),
            "waits for a kernel lock held by another task, in __mutex_lock");
  EXPECT_EQ(WaitDoing(ClassifyWait(false, {}, "", 0), "read", file), "is runnable without a CPU");
  EXPECT_EQ(WaitDoing(Blocked({}), "ioctl", file), "waits for an event the recorded stacks do not show");
  EXPECT_EQ(asked, 2) << "the file is looked up only for waits on the disk";
  // A disk wait whose file is not known says nothing of it.
  EXPECT_EQ(WaitDoing(io, "fsync", [] { return std::string(); }),
            "waits for writeback of the file's dirty pages to disk");
}

}  // namespace
}  // namespace syspgo::test
