/*===- readahead_format.h - the readahead plan as its writer and the shim read it ===//
 * The one definition of the readahead artifact's text and of how the
 * replayer hands it to the library, shared by the plan's writer
 * (optimize/readahead_plan.cc), the replayer that checks it and sets the
 * environment (optimize/prefetch_session.cc) and the library that applies
 * it (shim/readahead_shim.c). Plain C, so that the library stays C against
 * libc alone. docs/coldstart.md describes the format for people:
 *   the header line, then lines of tab-separated fields, each line a
 *   comment ('#'), a file (`file ADVICE DEV INO SIZE TOUCHES TOUCHED_BYTES
 *   READ_BYTES IN_ORDER_PCT RULE PATH`) or a device (`device MAJ:MIN
 *   READ_AHEAD_KB ADVISED_KB SYSFS_FILE WHY`).
 * A change that an older library would misread changes the header's version.
 */
#ifndef SYSPGO_SHIM_READAHEAD_FORMAT_H
#define SYSPGO_SHIM_READAHEAD_FORMAT_H

/* The first line of every readahead plan, without its line break. */
#define SYSPGO_READAHEAD_HEADER "syspgo-readahead 1"

/* The first field of a line: what the line describes. */
#define SYSPGO_READAHEAD_FILE_LINE "file"
#define SYSPGO_READAHEAD_DEVICE_LINE "device"
#define SYSPGO_READAHEAD_COMMENT '#'

/* A file line's ADVICE: what the library gives the file (default: nothing). */
#define SYSPGO_READAHEAD_DEFAULT "default"
#define SYSPGO_READAHEAD_SEQUENTIAL "sequential"
#define SYSPGO_READAHEAD_RANDOM "random"

/* The environment the replayer starts the program with: the plan's
 * absolute path, and "DEV:INO,DEV:INO,..." of the files a prefetch plan
 * replays beside it, which the library leaves to the kernel. */
#define SYSPGO_READAHEAD_ENV "SYSPGO_READAHEAD"
#define SYSPGO_READAHEAD_SKIP_ENV "SYSPGO_READAHEAD_SKIP"

/* The library ignores a plan past these bounds (it reads plans from anyone). */
enum {
  kReadaheadMaxPlanBytes = 4 << 20,
  kReadaheadMaxLineBytes = 8192,
};

#endif /* SYSPGO_SHIM_READAHEAD_FORMAT_H */
