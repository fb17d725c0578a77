//===- access_order.h - which bytes of which files a run touched, and when ===//
// The file-access order of a run, the input of prefetch plans: every byte
// range of a file the traced tree touched, with the time of the touch
// relative to the command's start. Four records say it, from most to least
// certain: read syscalls (file_io) and file-backed page faults (page_fault:
// the faulting page) are touches; the fault-around window of each fault
// (pages mapped with it, which the program may then use without faulting
// again) is a likely touch; page-cache additions made for the traced tree
// (page_cache: what the kernel read, readahead included) are what a cold
// run paid for, touched or not. Plans choose which to use (PlanPages).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

// A file the run touched. Touches refer to it by index: a run can hold
// millions of touches of a few hundred files, and a path per touch cost
// most of the memory of a report or plan of such a run.
struct TouchedFile {
  std::string path;      // absolute path (from opens, the mapping of the file, or an exec: the
                         // executable and its ELF interpreter, matched by dev and inode)
  uint64_t dev = 0, ino = 0;
  // The file is an executable the run exec'd, or its ELF interpreter. The
  // kernel reads pages of these during execve with no user fault or read
  // call to show for it (the headers, and the page padzero() clears before
  // the bss), so only the page-cache additions name those.
  bool exec_file = false;
};

struct FileTouch {
  uint32_t file = 0;     // -> AccessOrder::files
  char source = 'r';     // r read, f fault, a fault-around window, p page-cache addition
  uint64_t offset = 0, length = 0;  // bytes
  uint64_t ts_ns = 0;    // ns since the command started (run.command_start_ts)
};

// A path the traced tree looked up: an exec, an open, or an open that found
// nothing (ENOENT, ENOTDIR) or was refused (EACCES) after walking the path.
struct PathLookup {
  std::string path;    // as the program gave it (absolute or not)
  uint64_t ts_ns = 0;  // ns since the command started
};

struct AccessOrder {
  std::vector<TouchedFile> files;  // every file a touch names, in first-touch order
  std::vector<FileTouch> touches;  // ascending ts_ns
  std::vector<PathLookup> lookups;  // ascending ts_ns
  // "dev:ino" of files touched whose path the run never saw. Pages of a
  // block device's own cache (file-system metadata) are not files and are
  // left out: a plan's lookups make the path walks read them again.
  std::vector<std::string> unnamed;
  // How many touches each layer gave.
  uint64_t reads = 0, faults = 0, around = 0, additions = 0;
};

Result<AccessOrder> FileAccessOrder(Db& db, int64_t run_id);

// Whether the run was recorded with readahead off (collect --no-readahead):
// then each page it used was read by itself, and its touches are the pages
// used, no more. False when unknown.
bool RecordedWithoutReadahead(Db& db, int64_t run_id);

}  // namespace syspgo
