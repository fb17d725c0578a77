//===- stall_rules.cc - the kinds of wait a stall can be, and their words -===//
// The table kWaitRules and what reads it: the classifier of a wait and the
// filling of a finding's title, its fix and a critical path's hop text.
// Nothing here touches the database, so each rule can be tested from a
// list of frame names (tests/stall_rules_test.cc).
#include "analyze/stall_rules.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "bpf/syscalls.h"

namespace syspgo {
namespace {

constexpr int64_t kFmt = SYSPGO_S_IFMT;

// The words of an I/O wait in a page fault on a mapped file: its fix is to
// prefetch the file's pages, not to move the I/O to another thread.
constexpr char kMappedPage[] = "a page of a mapped file read from disk, in a page fault";
constexpr char kMappedFix[] =
    "The thread waits for pages of {file|a mapped file} to be read from disk as it touches them: prefetch them "
    "(madvise(MADV_WILLNEED), a syspgo prefetch plan) or keep the file resident. {saves}";

// A row's `frames` say a wait is of its class, its `signs` which wait of
// the class it is (for the disk: which phase of the I/O). anon_pipe_*:
// pipes got their own file operations in 6.15.
const WaitRule kWaitRules[] = {
    {.cls = WaitClass::kIo,
     .name = "io",
     .disk = true,
     .frames = {"io_schedule", "balance_dirty_pages", "submit_bio_wait", "blk_mq_get_tag", "jbd2_"},
     .signs = {{{"balance_dirty_pages"},
                "dirty-page throttling: the kernel held the writer until writeback caught up (balance_dirty_pages)"},
               {{"folio_wait_writeback", "__filemap_fdatawait_range", "filemap_fdatawait", "wait_on_page_writeback"},
                "writeback of the file's dirty pages to disk"},
               {{"blkdev_issue_flush"}, "the disk to flush its write cache"},
               {{"blkdev_issue_discard", "__blkdev_issue_discard"}, "discard (TRIM) of the freed blocks"},
               {{"jbd2_"}, "the filesystem journal"},
               {{"filemap_fault", "do_read_fault"}, kMappedPage},
               {{"filemap_read", "filemap_get_pages", "filemap_update_page"}, "file data read from disk"},
               {{"ext4_read_bh", "__ext4_get_inode_loc", "ext4_bread", "__sync_dirty_buffer", "ext4_wait_block_bitmap",
                 "__ext4_find_entry", "__bread"},
                "filesystem metadata I/O in {waiter}"}},
     .what = "block I/O{ in waiter}",
     .syscalls = {},
     .file_types = {SYSPGO_S_IFREG, SYSPGO_S_IFBLK},
     .file_what = "file I/O",
     .doing = "waits for {what}{ of file}",
     .title = "{who} stalls{ in ops} waiting for {what}{: file}",
     .file_op_title = "{who} stalls{ in ops} of {file}{, each}",
     .fixes = {{FixWhen::kWritesFile,
                "Take the {ops} of {file} off {who}: hand the data to a background writer thread (or write it "
                "asynchronously, e.g. with io_uring, or buffer it and write it later), or write to faster storage. "
                "{saves}"},
               {FixWhen::kReadsFile,
                "Read {file} before {who} needs it: in a background thread, with posix_fadvise(WILLNEED) or "
                "readahead(2), or with a syspgo prefetch plan at deploy; keep it in memory if it is read again. "
                "{saves}"},
               {FixWhen::kMappedPages, kMappedFix},
               {FixWhen::kAlways,
                "Move the {ops|I/O}{ of file} off {who} (a background thread), or use faster storage. {saves}"}}},
    {.cls = WaitClass::kLock,
     .name = "lock",
     .disk = false,
     .frames = {"futex_"},
     .signs = {},
     .what = "a futex: a mutex, condition variable or thread join",
     .syscalls = {"futex"},
     .file_types = {},
     .file_what = nullptr,
     .doing = "waits on a futex{ in ops}",
     .title = "{who} waits on a lock or condition (futex)",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways,
                "The thread waits on a futex that {waker} released: shorten the work done under the lock, split the "
                "lock, or hand work over without waiting for it. This is not I/O: no disk is involved."}}},
    {.cls = WaitClass::kSleep,
     .name = "sleep",
     .disk = false,
     .frames = {"hrtimer_nanosleep", "do_nanosleep", "common_nsleep"},
     .signs = {},
     .what = "a timer: the thread slept",
     .syscalls = {"nanosleep", "clock_nanosleep"},
     .file_types = {},
     .file_what = nullptr,
     .doing = "sleeps{ in ops}",
     .title = "{who} sleeps{ in ops}",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways,
                "The thread sleeps on purpose ({ops}): remove or shorten the sleep, or wait for the event itself "
                "instead of a timer. This is not I/O: no disk is involved."}}},
    {.cls = WaitClass::kPipe,
     .name = "pipe",
     .disk = false,
     .frames = {"pipe_read", "anon_pipe_read", "pipe_write", "anon_pipe_write"},
     .signs = {{{"pipe_read", "anon_pipe_read"}, "data in a pipe: its writer had not written yet"},
               {{"pipe_write", "anon_pipe_write"}, "room in a full pipe: its reader was behind"}},
     .what = "a pipe",
     .syscalls = {},
     .file_types = {SYSPGO_S_IFIFO},
     .file_what = "a pipe",
     .doing = "waits on a pipe{ in ops}",
     .title = "{who} waits on a pipe{ in ops}",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways,
                "The thread waits for the other end of a pipe ({waker}): the producer is slower than this consumer; "
                "speed it up, or do other work while the data is not there. This is not I/O: no disk is involved."}}},
    {.cls = WaitClass::kPoll,
     .name = "poll",
     .disk = false,
     .frames = {"do_sys_poll", "do_select", "core_sys_select", "ep_poll", "do_epoll_wait"},
     .signs = {},
     .what = "an event on file descriptors (poll, select or epoll)",
     .syscalls = {"epoll*", "poll", "ppoll", "select*", "pselect6"},
     .file_types = {},
     .file_what = nullptr,
     .doing = "waits for events{ in ops}",
     .title = "{who} waits for events{ in ops}",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways,
                "The thread waits for events in {ops}: idle time of an event loop. If events should have come "
                "sooner, look at their source ({waker}). This is not I/O: no disk is involved."}}},
    {.cls = WaitClass::kSocket,
     .name = "socket",
     .disk = false,
     .frames = {"sock_", "tcp_", "udp_", "unix_stream", "unix_dgram", "inet_", "sk_wait", "__skb_wait"},
     .signs = {},
     .what = "a socket: data to receive or room to send",
     .syscalls = {},
     .file_types = {SYSPGO_S_IFSOCK},
     .file_what = "a socket: data to receive or room to send",
     .doing = "waits on a socket{ in ops}",
     .title = "{who} waits on a socket{ in ops}",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways,
                "The thread waits on a socket ({waker}): the peer is slower than this thread; overlap the wait with "
                "other work or speed up the peer. This is not I/O: no disk is involved."}}},
    {.cls = WaitClass::kChild,
     .name = "child",
     .disk = false,
     .frames = {"do_wait", "kernel_wait4"},
     .signs = {},
     .what = "a child process to exit",
     .syscalls = {"wait4", "waitid"},
     .file_types = {},
     .file_what = nullptr,
     .doing = "waits for a child process{ in ops}",
     .title = "{who} waits for a child process{ in ops}",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways,
                "The thread waits for a child process to finish ({waker}). This is not I/O: no disk is involved."}}},
    {.cls = WaitClass::kDevice,
     .name = "device",
     .disk = false,
     .frames = {"n_tty_read", "tty_"},
     .signs = {},
     .what = "terminal input",
     .syscalls = {},
     .file_types = {SYSPGO_S_IFCHR},
     .file_what = "a device",
     .doing = "waits on a device{ in ops}",
     .title = "{who} waits{ in ops} for {what}",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways,
                "The thread waits for {what} (woken by {waker}): look at what that task does first."}}},
    {.cls = WaitClass::kKernelLock,
     .name = "kernel-lock",
     .disk = false,
     .frames = {"__mutex_lock", "mutex_lock", "rwsem_down", "down_read", "down_write", "__down"},
     .signs = {},
     .what = "a kernel lock held by another task, in {waiter}",
     .syscalls = {},
     .file_types = {},
     .file_what = nullptr,
     .doing = "waits for {what}",
     .title = "{who} waits for a kernel lock{ in ops}",
     .file_op_title = "{who} stalls{ in ops} of {file}{, each}",
     .fixes = {{FixWhen::kAlways,
                "The thread waits for a kernel lock another task held ({waker}): look at what that task does with "
                "the same file or object at the same time."}}},
    {.cls = WaitClass::kPageFault,
     .name = "page-fault",
     .disk = true,
     .frames = {"asm_exc_page_fault", "exc_page_fault"},
     .signs = {},
     .what = "a page fault, in {waiter}",
     .syscalls = {},
     .file_types = {},
     .file_what = nullptr,
     .doing = "waits for a page fault{ of file}",
     .title = "{who} stalls{ in ops} waiting for {what}{: file}",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways, kMappedFix}}},
    // Recognised by the thread's state, not by a rule: it was runnable.
    {.cls = WaitClass::kCpu,
     .name = "cpu",
     .disk = false,
     .frames = {},
     .signs = {},
     .what = "a CPU: the thread was runnable, but other tasks had the CPUs",
     .syscalls = {},
     .file_types = {},
     .file_what = nullptr,
     .doing = "is runnable without a CPU",
     .title = "{who} is runnable but waits for a CPU (preempted)",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways,
                "The thread was ready to run, but other tasks had the CPUs: run less beside it, give it more CPUs, "
                "or raise its priority (nice, cgroup cpu.weight). {saves} This is not I/O."}}},
    // What no rule recognised (no kallsyms, or an unusual path).
    {.cls = WaitClass::kOther,
     .name = "other",
     .disk = false,
     .frames = {},
     .signs = {},
     .what = "{an event in waiter|an event the recorded stacks do not show}",
     .syscalls = {},
     .file_types = {},
     .file_what = nullptr,
     .doing = "waits for {what}",
     .title = "{who} waits{ in ops} for {what}",
     .file_op_title = nullptr,
     .fixes = {{FixWhen::kAlways,
                "The thread waits for {what} (woken by {waker}): look at what that task does first."}}},
};

// Frames that only say "the thread slept", not what for.
const std::set<std::string>& SchedulerFrames() {
  static const std::set<std::string> s = {
      "__schedule", "schedule", "schedule_timeout", "io_schedule", "io_schedule_timeout", "schedule_preempt_disabled",
      "schedule_hrtimeout_range", "schedule_hrtimeout_range_clock", "preempt_schedule", "preempt_schedule_common",
      "__cond_resched", "bit_wait_io", "bit_wait", "__wait_on_bit", "out_of_line_wait_on_bit", "__wait_on_bit_lock",
      "folio_wait_bit_common", "folio_wait_bit", "wait_for_completion_io_timeout", "wait_for_completion_io",
      "wait_for_completion", "wait_for_completion_timeout", "__wait_for_common", "wait_woken", "io_schedule_prepare"};
  return s;
}

bool NamesSyscall(std::initializer_list<const char*> names, const std::string& syscall) {
  if (syscall.empty()) return false;
  for (std::string_view n : names) {
    if (n.ends_with('*') ? syscall.starts_with(n.substr(0, n.size() - 1)) : syscall == n) return true;
  }
  return false;
}

std::string WordsOf(const StallWords& w, std::string_view field) {
  if (field == "who") return w.who;
  if (field == "ops") return w.ops;
  if (field == "file") return w.file;
  if (field == "what") return w.what;
  if (field == "waker") return w.waker;
  if (field == "saves") return w.saves;
  if (field == "each") return w.each;
  return "";
}

}  // namespace

std::span<const WaitRule> WaitRules() { return kWaitRules; }

const WaitRule& RuleOf(WaitClass cls) {
  for (const WaitRule& r : kWaitRules)
    if (r.cls == cls) return r;
  return kWaitRules[std::size(kWaitRules) - 1];  // kOther, which every class has a row before
}

bool HasFrame(const std::vector<std::string>& k, std::initializer_list<const char*> prefixes) {
  for (const std::string& f : k)
    for (const char* p : prefixes)
      if (f.starts_with(p)) return true;
  return false;
}

std::string Waiter(const std::vector<std::string>& k) {
  for (const std::string& f : k)
    if (!SchedulerFrames().count(f)) return f;
  return "";
}

std::string StackSyscall(const std::vector<std::string>& k) {
  for (size_t i = k.size(); i-- > 0;) {
    for (const char* p : {"__x64_sys_", "__ia32_sys_", "__se_sys_", "__do_sys_"}) {
      if (k[i].starts_with(p)) return k[i].substr(strlen(p));
    }
  }
  return "";
}

bool InPageFault(const std::vector<std::string>& k) { return HasFrame(k, RuleOf(WaitClass::kPageFault).frames); }

std::string FillWords(std::string_view text, const std::function<std::string(std::string_view)>& field) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('{', i);
    size_t close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) {
      out += text.substr(i);
      break;
    }
    out += text.substr(i, open - i);
    std::string_view slot = text.substr(open + 1, close - open - 1);
    std::string_view fallback;
    if (size_t bar = slot.find('|'); bar != std::string_view::npos) {
      fallback = slot.substr(bar + 1);
      slot = slot.substr(0, bar);
    }
    size_t name = slot.size();
    while (name > 0 && (std::isalpha(static_cast<unsigned char>(slot[name - 1])) || slot[name - 1] == '_')) --name;
    std::string value = field(slot.substr(name));
    if (value.empty()) {
      out += fallback;
    } else {
      out += slot.substr(0, name);
      out += value;
    }
    i = close + 1;
  }
  return out;
}

Wait ClassifyWait(bool blocked, const std::vector<std::string>& k, const std::string& syscall, int64_t file_type) {
  auto waiter = [&](std::string_view f) { return f == "waiter" ? Waiter(k) : std::string(); };
  auto wait = [&](const WaitRule& r, const char* what) { return Wait{r.cls, FillWords(what, waiter)}; };
  if (!blocked) return wait(RuleOf(WaitClass::kCpu), RuleOf(WaitClass::kCpu).what);
  for (const WaitRule& r : kWaitRules) {
    if (!HasFrame(k, r.frames)) continue;
    for (const WhatSign& s : r.signs)
      if (HasFrame(k, s.frames)) return wait(r, s.what);
    return wait(r, r.what);
  }
  // No telling frames (no kallsyms, or an unusual path): the syscall and
  // the kind of file say what it is.
  for (const WaitRule& r : kWaitRules)
    if (NamesSyscall(r.syscalls, syscall)) return wait(r, r.what);
  for (const WaitRule& r : kWaitRules)
    if (std::find(r.file_types.begin(), r.file_types.end(), file_type & kFmt) != r.file_types.end())
      return wait(r, r.file_what);
  return wait(RuleOf(WaitClass::kOther), RuleOf(WaitClass::kOther).what);
}

std::string StallTitle(WaitClass cls, bool file_op, const StallWords& w) {
  const WaitRule& r = RuleOf(cls);
  const char* text = file_op && r.file_op_title ? r.file_op_title : r.title;
  return FillWords(text, [&](std::string_view f) { return WordsOf(w, f); });
}

std::string StallFix(WaitClass cls, FixWhen when, const StallWords& w) {
  for (const FixText& fix : RuleOf(cls).fixes) {
    bool applies = fix.when == FixWhen::kAlways || fix.when == when ||
                   (fix.when == FixWhen::kMappedPages && w.what == kMappedPage);
    if (applies) return FillWords(fix.text, [&](std::string_view f) { return WordsOf(w, f); });
  }
  return "";
}

std::string WaitDoing(const Wait& w, const std::string& syscall, const std::function<std::string()>& file) {
  return FillWords(RuleOf(w.cls).doing, [&](std::string_view f) -> std::string {
    if (f == "ops") return syscall;
    if (f == "what") return w.what;
    if (f == "file") return file();
    return "";
  });
}

}  // namespace syspgo
