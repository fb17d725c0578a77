//===- stall_rules.h - the kinds of wait a stall can be, and their words --===//
// Every off-CPU wait the stalls pass finds (stalls.h) is of one class: disk
// I/O, a futex, a sleep, a pipe... This header holds, in one table, all
// that the pass knows about each class: how a wait of it is recognised
// (kernel-stack frames, else the syscall, else the kind of file), what it
// waited for in words, how a hop of a critical path reads, the title of a
// finding and its fix. stalls.cc scans the run into episodes and stalls and
// asks this file for the class and the words; a new class of wait is one
// new row of kWaitRules in stall_rules.cc and a value of WaitClass.
//
// The texts are templates: `{field}` is replaced by a value (StallWords, or
// the waiter for the words of a wait); `{prefix field}` adds the prefix
// (every character before the field's name) only when the value is not
// empty, so "{ in ops}" is " in write+fsync" or nothing; `{... field|other}`
// says `other` when it is.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace syspgo {

// StallDetail::cause is WaitClassName(cls).
enum class WaitClass { kIo, kLock, kSleep, kPipe, kPoll, kSocket, kChild, kDevice, kKernelLock, kPageFault, kCpu, kOther };

// A wait in words, when the kernel stack shows one of `frames`.
struct WhatSign {
  std::initializer_list<const char*> frames;  // prefixes of frame names
  const char* what;
};

// When a fix applies, beyond the class: the stall is an operation on a
// regular file that wrote (or synced) it, or one that only read it; or it
// waited for the pages of a mapped file.
enum class FixWhen { kAlways, kWritesFile, kReadsFile, kMappedPages };
struct FixText {
  FixWhen when;
  const char* text;
};

// One class of wait. A wait is of the first class, in table order, with one
// of `frames` on its kernel stack; failing that, whose `syscalls` has its
// syscall; failing that, whose `file_types` has the type of the syscall's
// file. A wait the thread did not sleep in (it was preempted) is kCpu, and
// one no rule recognises kOther.
struct WaitRule {
  WaitClass cls;
  const char* name;                                // StallDetail::cause, in --json
  bool disk;                                       // waits on the disk: its block requests are attributed
  std::initializer_list<const char*> frames;       // prefixes of kernel-stack frames
  std::initializer_list<WhatSign> signs;           // which wait it is, in words: the first that matches
  const char* what;                                // the words when no sign matches; fields: waiter
  std::initializer_list<const char*> syscalls;     // names; "epoll*" is any name that starts with "epoll"
  std::initializer_list<int64_t> file_types;       // S_IF* types of the syscall's file
  const char* file_what;                           // the words when known by the file's type
  const char* doing;                               // a hop of a critical path; fields: ops (the syscall), what, file
  const char* title;                               // a finding's title; fields: StallWords
  const char* file_op_title;                       // ... when its stalls are operations on files (nullptr: title)
  std::initializer_list<FixText> fixes;            // the first that applies; fields: StallWords
};

// Every class, in the order they are tried.
std::span<const WaitRule> WaitRules();
const WaitRule& RuleOf(WaitClass cls);
inline const char* WaitClassName(WaitClass cls) { return RuleOf(cls).name; }

// What one off-CPU interval waited for.
struct Wait {
  WaitClass cls = WaitClass::kOther;
  std::string what;  // in words: "writeback of the file's dirty pages to disk"
};

// `blocked`: the thread slept (was not merely preempted); `kernel_stack`:
// its frames at the switch, innermost first; `syscall`: the one in
// progress ("" if none known); `file_type`: the S_IF* bits of its file
// (0 if none).
Wait ClassifyWait(bool blocked, const std::vector<std::string>& kernel_stack, const std::string& syscall,
                  int64_t file_type);

// Whether a frame of `k` starts with one of `prefixes`.
bool HasFrame(const std::vector<std::string>& k, std::initializer_list<const char*> prefixes);
// The first frame below the scheduler's: the function that decided to wait.
std::string Waiter(const std::vector<std::string>& k);
// The syscall a kernel stack is in ("" if none): its outermost sys_ frame.
std::string StackSyscall(const std::vector<std::string>& k);
// Whether the stack is in a page fault.
bool InPageFault(const std::vector<std::string>& k);

// The values a finding's title and fix are made of.
struct StallWords {
  std::string who;    // "train (main thread)"
  std::string ops;    // its syscalls, "write+fsync" ("" if none)
  std::string file;   // its file or their shape ("" if none)
  std::string what;   // what it waited for (Wait::what)
  std::string waker;  // who ended the wait: "train (pid 100)", "an interrupt"
  std::string saves;  // "That saves up to ..."
  std::string each;   // the bytes of an occurrence: "4.0 MiB each time" ("" if none)
};

std::string StallTitle(WaitClass cls, bool file_op, const StallWords& w);
std::string StallFix(WaitClass cls, FixWhen when, const StallWords& w);
// How a hop of a critical path that waits reads: "waits on a socket in
// recvfrom". `file` is called only for a class whose text names the file.
std::string WaitDoing(const Wait& w, const std::string& syscall, const std::function<std::string()>& file);

// Fills a template (see above): `field` gives each field's value.
std::string FillWords(std::string_view text, const std::function<std::string(std::string_view)>& field);

}  // namespace syspgo
