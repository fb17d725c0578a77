-- ===- profile.sql - the syspgo profile database, schema version 6 -------=== --
-- One SQLite file holds many runs; every event table carries run_id (-> run.id).
-- Units: ts = nanoseconds since the run's start (run.start_monotonic_ns) on
-- CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads; dur = nanoseconds;
-- sizes and offsets in bytes unless a column says pages. dev is the device
-- number as stat(2) reports it in st_dev (makedev(major, minor)); ino is the
-- inode number (st_ino). pid is the process (thread group) id, tid the thread.
-- Every table here is written only by collect/ (and copied, redacted, by
-- `syspgo redact`, whose writer is analyze/data/redact_writer.cc). There are
-- no derived tables: no pass writes what it computed back. Passes read these
-- rows only through the read-side data layer, analyze/data/ (one accessor
-- per table or concern: run.h's run accessor, paths, file calls, off-CPU
-- intervals, page cache and faults, samples and stacks, block requests;
-- named, cached statements with bound parameters), and hand each other
-- in-process values: stalls its FindingSet (with the critical path) to
-- report and export; the page-cache pass its PageCacheChart, tallied in the
-- same pass, to the report; FileAccessOrder its AccessOrder to access and
-- to optimize's plans; LoadCpuSamples its SampleSet to hot and optimize's
-- emitters. So every answer matches the rows. profile_db.cc applies this file to a new
-- database in one transaction and sets PRAGMA application_id / user_version;
-- it migrates older databases (versions 1 to 5 are in schemas/frozen/).

-- One collection: what ran, where, and how the collection went, and what
-- it was recorded with: the knobs in force, the build-ids of the kernel
-- that ran and of its vDSO, and the recording tier, "detail": 'full' (every
-- event a row, and every run before version 3) or 'lean' (what analyses
-- only count is in the aggregate tables; see run_aggregate). The lists
-- that go with them are tables of their own: run_setting_probe,
-- run_collector_file, run_damon_scheme. collect/ writes them and analyses
-- read them as one RunSettings (common/run_settings.h) through
-- analyze/run.h's ReadRunSettings. Before version 5 they were one JSON
-- object, settings_json; the migration made these columns and rows of it,
-- with a column's default for a member it could not read.
CREATE TABLE run (
  id INTEGER PRIMARY KEY,            -- run id, referenced as run_id everywhere
  command TEXT NOT NULL,             -- the command line as one shell-quoted string ('' for -p)
  argv_json TEXT NOT NULL,           -- the command's argv as a JSON array
  target_pid INTEGER NOT NULL,       -- the root process of the traced tree
  attached INTEGER NOT NULL,         -- 1 if attached to a running process (-p), 0 if spawned
  host TEXT NOT NULL,                -- uname nodename
  kernel_release TEXT NOT NULL,      -- uname release
  syspgo_version TEXT NOT NULL,      -- version of the collector that wrote the run
  start_realtime_ns INTEGER NOT NULL,   -- wall-clock start, ns since the Unix epoch
  start_monotonic_ns INTEGER NOT NULL,  -- CLOCK_MONOTONIC at start; ts columns count from here
  command_start_ts INTEGER,          -- ns since start when the command was released (probes were loading before)
  end_ts INTEGER,                    -- ns since start when collection ended; NULL while running
  status TEXT NOT NULL DEFAULT 'running',  -- running | complete | incomplete (collector died)
  collector_pid INTEGER NOT NULL DEFAULT 0,  -- pid of the collector, to tell a live run from a dead one
  boot_id TEXT NOT NULL DEFAULT '',  -- /proc/sys/kernel/random/boot_id at collection (pids repeat across boots)
  exit_reason TEXT,                  -- why collection ended: exited, signaled, duration, interrupted, ...
  exit_code INTEGER,                 -- the command's exit status as a shell reports it (128+N for signal N)
  detail TEXT NOT NULL DEFAULT '',   -- recording tier: lean | full ('' before tiers, schema version 3)
  ringbuf_bytes INTEGER NOT NULL DEFAULT 0,        -- each probe group's ring buffer, bytes (0 unknown)
  memory_budget_bytes INTEGER NOT NULL DEFAULT 0,  -- the collector's memory budget, bytes (0 unknown)
  cpu_freq_hz INTEGER NOT NULL DEFAULT 0,  -- cpu group's sampling frequency, Hz per CPU (0 unknown)
  offcpu_min_ns INTEGER NOT NULL DEFAULT 0,  -- shortest off-CPU interval (and, lean, file call) kept one by one, ns
  irq_min_ns INTEGER NOT NULL DEFAULT 0,     -- shortest interrupt handler run kept one by one, ns
  cold INTEGER NOT NULL DEFAULT 0,           -- 1 if the page cache was dropped before the command (--cold)
  no_readahead INTEGER NOT NULL DEFAULT 0,   -- 1 if block readahead was off while it ran (--no-readahead)
  kernel_build_id TEXT NOT NULL DEFAULT '',  -- GNU build-id of the kernel that ran (/sys/kernel/notes), lowercase
                                             -- hex; '' unreadable, and in runs before build-ids were recorded
  vdso_build_id TEXT NOT NULL DEFAULT '',    -- GNU build-id of its vDSO, lowercase hex ('' as above)
  damon_read INTEGER NOT NULL DEFAULT 0,     -- 1 if the DAMON pageout schemes in force were read (with the
                                             -- pagecache group): run_damon_scheme has them, maybe none
  events_recorded INTEGER NOT NULL DEFAULT 0,  -- events written to this database
  events_dropped INTEGER NOT NULL DEFAULT 0    -- events lost in the kernel (sum of run_drop)
);

-- The probe groups collect was asked for and tried, in its order. run_probe
-- says how each went, written at the run's end: a run whose collector died
-- has these rows and none in run_probe.
CREATE TABLE run_setting_probe (
  run_id INTEGER NOT NULL REFERENCES run(id),
  position INTEGER NOT NULL,         -- place in the list, from 0
  probe_group TEXT NOT NULL,         -- group name (as in run_probe)
  PRIMARY KEY (run_id, position)
);

-- The files the collector itself had mapped (its binary, its libraries):
-- their pages stay cached through --cold's drop, so a plan made from the
-- run adds them back (optimize/plan_from_run.cc).
CREATE TABLE run_collector_file (
  run_id INTEGER NOT NULL REFERENCES run(id),
  position INTEGER NOT NULL,         -- place in the list, from 0
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  PRIMARY KEY (run_id, position)
);

-- The DAMON schemes that could page memory out without pressure while the
-- run recorded the page cache (common/damon.h), when run.damon_read is 1.
CREATE TABLE run_damon_scheme (
  run_id INTEGER NOT NULL REFERENCES run(id),
  position INTEGER NOT NULL,         -- place in the list, from 0
  path TEXT NOT NULL,                -- "kdamonds/K/contexts/C/schemes/S", or "damon_reclaim"
  ops TEXT NOT NULL,                 -- a kdamond's operations set (paddr, vaddr); '' for damon_reclaim
  min_age INTEGER NOT NULL,          -- kdamond: idle aggregation intervals before pageout (-1 unknown)
  aggr_us INTEGER NOT NULL,          -- kdamond: the aggregation interval, µs (-1 unknown)
  min_age_us INTEGER NOT NULL,       -- damon_reclaim: idle time before pageout, µs (-1 unknown)
  PRIMARY KEY (run_id, position)
);

-- Per probe group: whether it attached, and if not, why.
CREATE TABLE run_probe (
  run_id INTEGER NOT NULL REFERENCES run(id),
  probe_group TEXT NOT NULL,         -- group name: proc, fileio, faults, pagecache, block, irq, sched, cpu
  attached INTEGER NOT NULL,         -- 1 attached, 0 not
  detail TEXT NOT NULL,              -- error or note ('' when attached cleanly)
  events INTEGER NOT NULL DEFAULT 0, -- events recorded from this group
  PRIMARY KEY (run_id, probe_group)
);

-- In-kernel aggregate maps of `collect --detail lean` (settings "detail"),
-- one row per map: what was drained, and the updates the map could not take
-- because it was full (the aggregate undercounts by at most those; 0 means
-- the map's table is exact). Drained periodically and at the run's end.
CREATE TABLE run_aggregate (
  run_id INTEGER NOT NULL REFERENCES run(id),
  probe_group TEXT NOT NULL,         -- group name (as in run_probe)
  map TEXT NOT NULL,                 -- the BPF map's name
  entries INTEGER NOT NULL,          -- keys drained (rows the map's table got)
  overflow INTEGER NOT NULL,         -- updates refused because the map was full
  PRIMARY KEY (run_id, probe_group, map)
);

-- Events the kernel side could not hand over (ring buffer full), per CPU and group.
CREATE TABLE run_drop (
  run_id INTEGER NOT NULL REFERENCES run(id),
  probe_group TEXT NOT NULL,         -- group name (as in run_probe)
  cpu INTEGER NOT NULL,              -- CPU number whose ring-buffer writes failed
  dropped INTEGER NOT NULL,          -- events lost
  PRIMARY KEY (run_id, probe_group, cpu)
);

-- Processes of the traced tree (one row per process; threads are in thread).
CREATE TABLE process (
  run_id INTEGER NOT NULL REFERENCES run(id),
  pid INTEGER NOT NULL,
  ppid INTEGER NOT NULL,             -- parent pid at fork (0 if unknown)
  comm TEXT NOT NULL,                -- task name at its last exec or rename
  exe TEXT NOT NULL DEFAULT '',      -- path of the last executed file ('' if none seen)
  argv TEXT NOT NULL DEFAULT '',     -- argv of the last exec, arguments separated by spaces
  start_ts INTEGER NOT NULL,         -- ns since run start of fork (or of attach)
  exit_ts INTEGER,                   -- ns since run start when the last thread exited
  exit_code INTEGER,                 -- exit status (128+N if killed by signal N)
  cgroup TEXT NOT NULL DEFAULT '',   -- its cgroup (memory v1's, else v2's; relative to the hierarchy's root) when
                                     -- first seen or at its last exec; '' if unknown (before version 6)
  container TEXT NOT NULL DEFAULT '', -- the container id in that cgroup's path (64 hex digits), '' if none
  PRIMARY KEY (run_id, pid, start_ts)
);

-- Threads of the traced tree (the main thread has tid = pid).
CREATE TABLE thread (
  run_id INTEGER NOT NULL REFERENCES run(id),
  tid INTEGER NOT NULL,
  pid INTEGER NOT NULL,              -- owning process
  comm TEXT NOT NULL,                -- thread name when it was created or last renamed
  start_ts INTEGER NOT NULL,         -- ns since run start
  exit_ts INTEGER,                   -- ns since run start
  PRIMARY KEY (run_id, tid, start_ts)
);

-- Every exec of the traced tree.
CREATE TABLE exec (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  filename TEXT NOT NULL,            -- the file executed, as the kernel resolved it
  argv TEXT NOT NULL                 -- arguments separated by spaces (first 1 KiB)
);

-- The files an exec maps without an open call (schema version 6): each file
-- exec'd and the ELF interpreter it names, as collect found them when it saw
-- the exec (through the process's /proc entries while it lives), one row a
-- name: no key on the names, which `syspgo redact` empties. Analyses name
-- these files from here: they read nothing from the machine they run on.
CREATE TABLE exec_file (
  run_id INTEGER NOT NULL REFERENCES run(id),
  filename TEXT NOT NULL,            -- as exec.filename names it, or as an executable's PT_INTERP names its interpreter
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  path TEXT NOT NULL,                -- absolute path with symbolic links resolved
  interpreter TEXT NOT NULL          -- the ELF interpreter the file names (PT_INTERP, as written); '' for none
);

-- Files seen in the run, keyed by (dev, ino), with the absolute path they were
-- opened by (resolved in the kernel from the dentry chain; the first path wins).
CREATE TABLE file (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  path TEXT NOT NULL,                -- absolute path; '...' first if deeper than the walk (48 levels)
  PRIMARY KEY (run_id, dev, ino)
);

-- The size of files of the run (schema version 6): st_size when collect first
-- saw the file (the open that named it, or the exec that mapped it), read by
-- its path and kept only if the path still led to the same (dev, ino).
CREATE TABLE file_size (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  size INTEGER NOT NULL,             -- bytes
  PRIMARY KEY (run_id, dev, ino)
);

-- x86_64 syscall numbers recorded by the fileio group, and their names
-- (syscall_oncpu may hold any number: one not named here is shown as such).
CREATE TABLE syscall_name (
  nr INTEGER PRIMARY KEY,            -- syscall number on x86_64
  name TEXT NOT NULL                 -- its name as in syscalls(2)
);
INSERT INTO syscall_name (nr, name) VALUES
  (0, 'read'), (1, 'write'), (2, 'open'), (3, 'close'), (9, 'mmap'),
  (17, 'pread64'), (18, 'pwrite64'), (19, 'readv'), (20, 'writev'),
  (74, 'fsync'), (75, 'fdatasync'), (257, 'openat'), (277, 'sync_file_range'),
  (295, 'preadv'), (296, 'pwritev'), (327, 'preadv2'), (328, 'pwritev2'),
  (437, 'openat2'),
  -- path lookups (file_lookup), schema version 2
  (4, 'stat'), (6, 'lstat'), (21, 'access'), (59, 'execve'), (89, 'readlink'), (262, 'newfstatat'),
  (267, 'readlinkat'), (269, 'faccessat'), (322, 'execveat'), (332, 'statx'), (439, 'faccessat2'),
  -- syscalls that can run long on the CPU (syscall_oncpu), schema version 6
  (7, 'poll'), (10, 'mprotect'), (11, 'munmap'), (12, 'brk'), (16, 'ioctl'), (23, 'select'), (25, 'mremap'),
  (26, 'msync'), (28, 'madvise'), (35, 'nanosleep'), (40, 'sendfile'), (41, 'socket'), (42, 'connect'),
  (44, 'sendto'), (45, 'recvfrom'), (46, 'sendmsg'), (47, 'recvmsg'), (56, 'clone'), (57, 'fork'),
  (58, 'vfork'), (60, 'exit'), (61, 'wait4'), (62, 'kill'), (76, 'truncate'), (77, 'ftruncate'),
  (82, 'rename'), (87, 'unlink'), (149, 'mlock'), (162, 'sync'), (187, 'readahead'), (202, 'futex'),
  (217, 'getdents64'), (221, 'fadvise64'), (230, 'clock_nanosleep'), (231, 'exit_group'),
  (232, 'epoll_wait'), (263, 'unlinkat'), (264, 'renameat'), (275, 'splice'), (285, 'fallocate'),
  (288, 'accept4'), (306, 'syncfs'), (316, 'renameat2'), (318, 'getrandom'), (319, 'memfd_create'),
  (326, 'copy_file_range'), (435, 'clone3'), (436, 'close_range');

-- Syscalls of the traced tree, of any kind, that ran at least offcpu_min_ns
-- (run.offcpu_min_ns) on a CPU in the kernel (schema version 6): the pauses
-- a thread spends on-CPU (random bytes, a copy into the page cache, freeing
-- or zeroing memory, direct reclaim), which no off-CPU interval shows. A
-- thread is timed from its first file syscall on (bpf/fileio.bpf.c). A call
-- on a file descriptor is also a file_io row with the same tid and ts.
CREATE TABLE syscall_oncpu (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start, at syscall entry
  dur INTEGER NOT NULL,              -- ns in the syscall
  oncpu INTEGER NOT NULL,            -- ns of it on a CPU, to a scheduler tick (the rest: asleep or waiting
                                     -- for a CPU)
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  nr INTEGER NOT NULL,               -- syscall number (-> syscall_name, when named there)
  arg0 INTEGER NOT NULL,             -- the first three arguments, raw (an fd, a length, flags...)
  arg1 INTEGER NOT NULL,
  arg2 INTEGER NOT NULL,
  ret INTEGER NOT NULL               -- syscall return: a count, a value, or -errno
);

-- open/openat/openat2 calls.
CREATE TABLE file_open (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start, at syscall entry
  dur INTEGER NOT NULL,              -- ns in the syscall
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  nr INTEGER NOT NULL,               -- syscall number (-> syscall_name)
  path TEXT NOT NULL,                -- path as the program gave it (first 255 bytes)
  flags INTEGER NOT NULL,            -- open flags (O_*)
  ret INTEGER NOT NULL,              -- resulting fd, or -errno
  dev INTEGER NOT NULL,              -- 0 if the open failed
  ino INTEGER NOT NULL               -- 0 if the open failed
);

-- Paths looked up without being opened (schema version 2): the stat family,
-- access, readlink, and execve calls that failed (a successful one is an exec
-- row). Each walks the path, and on a cold cache reads the directories and
-- inodes it misses. fstat (a path of "" with AT_EMPTY_PATH) is not recorded.
CREATE TABLE file_lookup (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start, at syscall entry
  dur INTEGER NOT NULL,              -- ns in the syscall
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  nr INTEGER NOT NULL,               -- syscall number (-> syscall_name)
  path TEXT NOT NULL,                -- path as the program gave it (first 255 bytes)
  flags INTEGER NOT NULL,            -- AT_* flags of fstatat, statx, faccessat2 and execveat, else 0
  ret INTEGER NOT NULL               -- 0, -errno, or (readlink) the bytes of the link
);

-- read/write-family, sync and close calls on a file descriptor.
CREATE TABLE file_io (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start, at syscall entry
  dur INTEGER NOT NULL,              -- ns in the syscall (the latency)
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  nr INTEGER NOT NULL,               -- syscall number (-> syscall_name)
  fd INTEGER NOT NULL,               -- the file descriptor argument
  dev INTEGER NOT NULL,              -- 0 if the fd was not open
  ino INTEGER NOT NULL,
  kind INTEGER NOT NULL,             -- file type bits of i_mode (S_IFREG, S_IFIFO, ...; 0 = anon inode/unknown)
  pos INTEGER NOT NULL,              -- file offset the call used, bytes (-1 if none)
  req INTEGER NOT NULL,              -- bytes asked (count, sum of iovecs, or sync range length)
  ret INTEGER NOT NULL               -- bytes done, or -errno; 0 for a successful sync/close
);

-- The lean tier (run settings "detail" = "lean"): file_io then holds only
-- the calls an analysis needs one by one (bpf/fileio.bpf.c): those of
-- offcpu_min_ns or longer, syncs, the first call of each (file, syscall),
-- and every call that touched a page of a regular file or block device no
-- call of the run had touched. Every read, write, sync and close is counted
-- in file_io_total and file_io_hist, exact unless run_aggregate says a map
-- overflowed. Rows are cumulative: the collector replaces them as it drains.

-- Calls per (file, syscall). Pipes, sockets and anonymous inodes, made and
-- dropped all the time (a socket a connection), are counted per kind, with
-- ino 0, so the table grows with the files that last, not with time.
CREATE TABLE file_io_total (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,              -- as file_io.dev (0 if the fd was not open)
  ino INTEGER NOT NULL,              -- inode number
  kind INTEGER NOT NULL,             -- as file_io.kind
  nr INTEGER NOT NULL,               -- syscall number (-> syscall_name)
  calls INTEGER NOT NULL,            -- calls made
  errors INTEGER NOT NULL,           -- calls that returned -errno
  bytes INTEGER NOT NULL,            -- bytes done (reads and writes)
  req INTEGER NOT NULL,              -- bytes asked
  total_ns INTEGER NOT NULL,         -- time in the calls
  max_ns INTEGER NOT NULL,           -- the slowest call
  first_ts INTEGER NOT NULL,         -- ns since run start of the first call's entry
  PRIMARY KEY (run_id, dev, ino, kind, nr)
);

-- Latency of the calls per (file, syscall), a log2 histogram: slot s counts
-- calls of [2^s, 2^(s+1)) ns (slot 0 also 0 ns, slot 31 everything longer).
CREATE TABLE file_io_hist (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,              -- dev, ino, kind, nr: the key of file_io_total
  ino INTEGER NOT NULL,              -- inode number
  kind INTEGER NOT NULL,             -- file type bits
  nr INTEGER NOT NULL,               -- syscall number
  slot INTEGER NOT NULL,             -- floor(log2(ns))
  calls INTEGER NOT NULL,            -- calls in the slot (slots without any have no row)
  PRIMARY KEY (run_id, dev, ino, kind, nr, slot)
);

-- mmap calls that map a file (anonymous maps are not recorded).
CREATE TABLE mmap (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start
  dur INTEGER NOT NULL,              -- ns in the syscall
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  addr INTEGER NOT NULL,             -- start address of the mapping (the return value), or -errno
  len INTEGER NOT NULL,              -- bytes
  prot INTEGER NOT NULL,             -- PROT_* bits
  flags INTEGER NOT NULL,            -- MAP_* bits
  fd INTEGER NOT NULL,               -- the file descriptor mapped
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  off INTEGER NOT NULL               -- file offset of the mapping, bytes
);

-- ===- Cross-layer groups ---------------------------------------------=== --
-- Stacks are stored once per run and referred to by id (0 = no stack).
CREATE TABLE stack (
  run_id INTEGER NOT NULL REFERENCES run(id),
  id INTEGER NOT NULL,               -- referenced as *_stack_id / stack_id
  frames BLOB NOT NULL,              -- instruction pointers, innermost first, 8-byte little-endian each
  PRIMARY KEY (run_id, id)
);

-- @faults tables
-- User page faults of the traced tree (exceptions:page_fault_user, x86), one
-- row per fault. The tracepoint fires when the fault starts; there is no exit
-- hook, so what happened inside comes from the same thread's events before
-- it returns to user mode (matched in the kernel by its saved user
-- registers): fault-around (filemap:mm_filemap_map_pages), the file's ->fault
-- handler (filemap:mm_filemap_fault) and pages it added to the page cache.
-- A major fault is one that added pages: the page was not cached and the
-- fault read it (this is what the kernel counts as PGMAJFAULT). Faults on
-- tmpfs/shmem and swap-ins are never marked major (they bypass filemap).
-- Fault-around maps up to 16 cached pages around the faulting one, so one
-- fault covers several pages and the next touches in that range do not fault.
CREATE TABLE page_fault (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start, when the fault started
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  addr INTEGER NOT NULL,             -- faulting user address
  ip INTEGER NOT NULL,               -- user instruction pointer of the faulting instruction
  error_code INTEGER NOT NULL,       -- x86 X86_PF_* bits: 1 page present (protection fault), 2 write,
                                     -- 4 user, 8 reserved bit, 16 instruction fetch, 32 pkey, 64 shadow stack
  dev INTEGER NOT NULL,              -- mapped file, st_dev encoding; 0 for anonymous memory
  ino INTEGER NOT NULL,              -- mapped file's inode; 0 for anonymous memory
  pgoff INTEGER NOT NULL,            -- page index in the file (4 KiB pages) of addr; -1 if anonymous or no vma
  vm_start INTEGER NOT NULL,         -- start address of the vma (0 if none)
  vm_flags INTEGER NOT NULL,         -- VM_* bits: 1 read, 2 write, 4 exec, 8 shared, ...
  major INTEGER NOT NULL,            -- 1 if the fault added pages to the page cache (waited for a read)
  filemap INTEGER NOT NULL,          -- 1 if the file's ->fault handler ran: fault-around did not map the page
  around_first INTEGER NOT NULL,     -- first page index fault-around tried to map; -1 if none
  around_last INTEGER NOT NULL       -- last page index fault-around tried to map (inclusive); -1 if none
);
CREATE INDEX page_fault_by_file ON page_fault (run_id, dev, ino, pgoff);

-- The lean tier (run settings "detail" = "lean"): page_fault then holds the
-- faults on anonymous memory, the major faults, and the faults on a file
-- that touched a page of it (its own or fault-around's) no earlier fault of
-- the run had: the first touches access order and prefetch plans read. A
-- process started again and again faults the same library pages each time;
-- those repeats are only counted here. Rows are cumulative: the collector
-- replaces them as it goes.
CREATE TABLE page_fault_total (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,              -- mapped file, st_dev encoding; 0 for anonymous memory
  ino INTEGER NOT NULL,              -- mapped file's inode; 0 for anonymous memory
  faults INTEGER NOT NULL,           -- user page faults on it
  major INTEGER NOT NULL,            -- of them, faults that added pages to the page cache
  PRIMARY KEY (run_id, dev, ino)
);

-- @pagecache tables
-- Folios added to and deleted from the page cache (filemap tracepoints) on
-- the whole system, kept when the current task is traced, the file is one
-- the traced tree brought pages of into the cache or read, mapped or
-- faulted, or the folio is charged to a memory cgroup the traced tree runs
-- in that has a limit (its own or an ancestor's) (`why`). The collector's
-- own writes are never kept. A deletion runs in the task that freed the
-- page: kswapd, a task that hit its memory cgroup's limit (the stack then
-- passes try_to_free_mem_cgroup_pages), or a truncate. A refault is an
-- addition of a page deleted earlier in the run: see page_cache_refault.
-- Every deletion in reclaim has its own kernel stack. Outside reclaim, a
-- deletion within 10 ms of one of the same file by the same task on the
-- same CPU shares that one's stack and has bit 256 set in `why`.
CREATE TABLE page_cache (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start
  op INTEGER NOT NULL,               -- 1 added, 2 deleted
  pid INTEGER NOT NULL,              -- current task's process (not necessarily traced)
  tid INTEGER NOT NULL,
  comm TEXT NOT NULL,                -- current task's name (kswapd0 for background reclaim)
  dev INTEGER NOT NULL,              -- file, st_dev encoding
  ino INTEGER NOT NULL,
  idx INTEGER NOT NULL,              -- first page of the folio, page index in the file (4 KiB pages)
  pages INTEGER NOT NULL,            -- pages in the folio (1, or 2^order for a large folio)
  task_cgroup INTEGER NOT NULL,      -- current task's memory cgroup (-> memory_cgroup.id); 0 if unknown
  page_cgroup INTEGER NOT NULL,      -- memory cgroup the folio is charged to (-> memory_cgroup.id); 0 if none
  why INTEGER NOT NULL,              -- why kept (bits): 1 traced task, 2 file touched by the tree,
                                     -- 4 charged to a limited memory cgroup of the tree
  stack_id INTEGER NOT NULL          -- kernel stack of a deletion (-> stack.id); 0 for additions
);
CREATE INDEX page_cache_by_page ON page_cache (run_id, dev, ino, op, idx, ts);

-- Additions of pages deleted earlier in the run, with the last such deletion.
-- Page-cache folios are naturally aligned (a folio of 2^k pages starts at a
-- multiple of 2^k), so a deleted folio overlapping an added one either holds
-- its first page, and starts at idx rounded down to a power of two up to
-- 512 pages (PMD order, the largest on x86_64), or starts inside it: two
-- index lookups per addition instead of a range scan.
CREATE VIEW page_cache_refault AS
SELECT run_id, ts, pid, tid, comm, dev, ino, idx, pages,
       deleted_ts,                    -- ns since run start of the last deletion of an overlapping folio
       ts - deleted_ts AS refault_dur -- ns the page was out of the cache
FROM (
  SELECT a.run_id, a.ts, a.pid, a.tid, a.comm, a.dev, a.ino, a.idx, a.pages,
         (SELECT MAX(t) FROM (
            SELECT MAX(d.ts) AS t FROM page_cache AS d
            WHERE d.run_id = a.run_id AND d.dev = a.dev AND d.ino = a.ino AND d.op = 2
              AND d.idx IN (a.idx, a.idx & ~1, a.idx & ~3, a.idx & ~7, a.idx & ~15, a.idx & ~31,
                            a.idx & ~63, a.idx & ~127, a.idx & ~255, a.idx & ~511)
              AND d.idx + d.pages > a.idx AND d.ts < a.ts
            UNION ALL
            SELECT MAX(d.ts) FROM page_cache AS d
            WHERE d.run_id = a.run_id AND d.dev = a.dev AND d.ino = a.ino AND d.op = 2
              AND d.idx > a.idx AND d.idx < a.idx + a.pages AND d.ts < a.ts)) AS deleted_ts
  FROM page_cache AS a
  WHERE a.op = 1
)
WHERE deleted_ts IS NOT NULL;

-- The lean tier (run settings "detail" = "lean", the default since version
-- 3): page_cache then holds no rows; the kernel counts what the rows would
-- have said, with the same filter (see bpf/pagecache.bpf.c), into the five
-- tables below, exact unless run_aggregate says a map overflowed. A
-- "deleter" is the 64-bit hash of a deletion's kernel stack (shared by a
-- burst outside reclaim as in page_cache), its top two bits the deleting
-- task's kind by name: 0 any, 1 kswapd*, 2 kdamond*; stored as a signed
-- integer. Rows are cumulative: the collector replaces them as it drains.

-- Pages per (file, memory cgroup, operation, deleter, deleting task's name).
CREATE TABLE page_cache_total (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,              -- file, st_dev encoding
  ino INTEGER NOT NULL,              -- inode number
  cgroup INTEGER NOT NULL,           -- memory cgroup the folios were charged to (-> memory_cgroup.id), 0 if none
  op INTEGER NOT NULL,               -- 1 added (not deleted earlier in the run), 2 deleted,
                                     -- 3 added again after a deletion in the run (a refault)
  deleter INTEGER NOT NULL,          -- op 2: this deletion's deleter, op 3: the last deletion's before, op 1: 0
  comm TEXT NOT NULL,                -- op 2: the deleting task's name, else ''
  comm_id INTEGER NOT NULL,          -- comm's number in the run (1, 2, ... as first met, 0 for ''): the key
                                     -- holds it instead of comm, which syspgo redact may blank
  stack_id INTEGER NOT NULL,         -- the deleter's kernel stack (-> stack.id), 0 for op 1 or if lost
  pages INTEGER NOT NULL,            -- pages (4 KiB)
  events INTEGER NOT NULL,           -- folios: the page_cache rows --detail full would have written
  first_ts INTEGER NOT NULL,         -- ns since run start of the first
  PRIMARY KEY (run_id, dev, ino, cgroup, op, deleter, comm_id)
);

-- Every page the run added to the cache, once: its first addition.
CREATE TABLE page_cache_page (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,              -- st_dev encoding
  ino INTEGER NOT NULL,              -- inode number
  idx INTEGER NOT NULL,              -- page index in the file (4 KiB pages)
  ts INTEGER NOT NULL,               -- ns since run start of its first addition
  pid INTEGER NOT NULL,              -- the task that added it (not necessarily traced)
  tid INTEGER NOT NULL,              -- tid
  why INTEGER NOT NULL,              -- as page_cache.why, of that addition
  PRIMARY KEY (run_id, dev, ino, idx)
);

-- Each page added again after a deletion, once per distinct deleter before
-- it (at most 3 per page; run_aggregate counts pages with more).
CREATE TABLE page_cache_page_refault (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,              -- st_dev encoding
  ino INTEGER NOT NULL,              -- inode number
  idx INTEGER NOT NULL,              -- page index in the file (4 KiB pages)
  deleter INTEGER NOT NULL,          -- see above
  stack_id INTEGER NOT NULL,         -- the deleter's kernel stack (-> stack.id), 0 if lost
  PRIMARY KEY (run_id, dev, ino, idx, deleter)
);

-- Pages added, deleted and added again per 100 ms of the run.
CREATE TABLE page_cache_series (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start: the slice's start (a multiple of 100 ms)
  op INTEGER NOT NULL,               -- as page_cache_total.op
  pages INTEGER NOT NULL,            -- pages (4 KiB)
  PRIMARY KEY (run_id, ts, op)
);

-- A page DAMON (a kdamond thread) had deleted, added again: its load-to-reload time.
CREATE TABLE page_cache_reuse (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start of the reload
  dev INTEGER NOT NULL,              -- st_dev encoding
  ino INTEGER NOT NULL,              -- inode number
  idx INTEGER NOT NULL,              -- page index in the file (4 KiB pages)
  reuse_ns INTEGER NOT NULL          -- ns from the page's previous addition to this one
);

-- Readahead decisions of the traced tree (readahead tracepoints).
CREATE TABLE readahead (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  kind INTEGER NOT NULL,             -- 1 sync (a read missed the cache), 2 async (a read reached the
                                     -- readahead mark), 3 window read (page_cache_ra_order),
                                     -- 4 fixed range read (page_cache_ra_unbounded: mmap read-around, fadvise)
  dev INTEGER NOT NULL,              -- st_dev encoding
  ino INTEGER NOT NULL,
  idx INTEGER NOT NULL,              -- first page index (4 KiB pages)
  pages INTEGER NOT NULL,            -- kinds 1, 2: pages the read asked for; 3, 4: pages to read
  async_pages INTEGER NOT NULL       -- kind 3: pages of the window's async tail; 4: lookahead; else 0
);

-- Memory cgroups (v1) named in page_cache, as they were when first seen in the run.
CREATE TABLE memory_cgroup (
  run_id INTEGER NOT NULL REFERENCES run(id),
  id INTEGER NOT NULL,               -- kernfs id: the inode number of the cgroup's directory
  path TEXT NOT NULL,                -- path under the memory hierarchy's mount ('/' for the root; '' if
                                     -- it was removed before it could be looked up)
  limit_bytes INTEGER,               -- memory.limit_in_bytes then (NULL if unreadable)
  PRIMARY KEY (run_id, id)
);

-- @block tables
-- Block requests on every disk (not only the traced tree's: writeback and
-- journal I/O done for it run in kworkers), one row per completion; a
-- request completed in parts gives one row per part (flags bit 512). A
-- data-less flush a task asked for (fsync) is done by the queue's own flush
-- request: both appear, the task's as a 0-byte write with flags preflush and
-- unissued (8 | 1024) and its pid, the one the device ran as op flush, pid 0.
CREATE TABLE block_rq (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start when the request was issued to the driver
                                     -- (when it was created, for flags bit 1024)
  dur INTEGER NOT NULL,              -- ns from ts to this completion (the device latency, unless bit 1024)
  queue_dur INTEGER,                 -- ns from the request's creation (block_io_start) to issue; NULL if not seen
  dev INTEGER NOT NULL,              -- whole disk, st_dev encoding (makedev(major, minor))
  part_dev INTEGER NOT NULL,         -- device the I/O was submitted to (a partition, or dev itself):
                                     -- equals st_dev of a filesystem on it
  sector INTEGER NOT NULL,           -- first sector, 512-byte units from the start of the whole disk (-1: flush)
  bytes INTEGER NOT NULL,            -- bytes completed by this row (0 for a flush)
  op INTEGER NOT NULL,               -- REQ_OP_* (-> block_op for this run)
  flags INTEGER NOT NULL,            -- as submitted or completed: 1 sync, 2 meta, 4 fua, 8 preflush,
                                     -- 16 readahead, 32 background,
                                     -- 64 prio, 128 nowait, 512 partial (more of the request completes later),
                                     -- 1024 unissued (completed without reaching the driver itself: see above)
  cmd_flags INTEGER NOT NULL,        -- the kernel's raw cmd_flags at completion (bit numbers vary by kernel version)
  error INTEGER NOT NULL,            -- blk_status_t: 0 ok, else the block layer's status code
  pid INTEGER NOT NULL,              -- process that made the request from its bio (0 if not seen)
  tid INTEGER NOT NULL,              -- its thread (0 if not seen)
  comm TEXT NOT NULL,                -- its task name ('' if not seen)
  target INTEGER NOT NULL,           -- 1 if pid belongs to the traced tree
  issue_pid INTEGER NOT NULL,        -- process current at issue (a kworker, the submitter, or an interrupted task)
  issue_tid INTEGER NOT NULL,        -- its thread
  file_dev INTEGER NOT NULL,         -- st_dev of the file the first page belongs to (0: no file, e.g. O_DIRECT)
  file_ino INTEGER NOT NULL,         -- its inode (a block device's own inode for filesystem metadata)
  file_index INTEGER NOT NULL        -- page index of the first page in that file (pages of 4 KiB)
);
CREATE INDEX block_rq_by_time ON block_rq (run_id, ts);

-- Names of the REQ_OP_* values, read from the running kernel's BTF (they vary by version).
CREATE TABLE block_op (
  run_id INTEGER NOT NULL REFERENCES run(id),
  op INTEGER NOT NULL,               -- REQ_OP_* value in this kernel
  name TEXT NOT NULL,                -- read, write, flush, discard, ...
  PRIMARY KEY (run_id, op)
);

-- Issue-to-completion latency of whole requests, a log2 histogram kept in
-- the kernel (as biolatency does) for every request the probes saw issued
-- and completed (unissued and partial completions are not counted).
CREATE TABLE block_latency_hist (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,              -- whole disk, st_dev encoding
  part_dev INTEGER NOT NULL,         -- device submitted to, st_dev encoding
  op INTEGER NOT NULL,               -- REQ_OP_* (-> block_op)
  slot INTEGER NOT NULL,             -- floor(log2(latency in ns))
  lo_ns INTEGER NOT NULL,            -- bucket lower bound, ns (2^slot; 0 for slot 0)
  hi_ns INTEGER NOT NULL,            -- bucket upper bound, ns, exclusive (2^(slot+1))
  count INTEGER NOT NULL,            -- requests in the bucket
  sum_ns INTEGER NOT NULL,           -- their summed latency, ns
  PRIMARY KEY (run_id, dev, part_dev, op, slot)
);

-- @irq tables
-- Time in interrupt handlers, per CPU, kind and vector, as log2 histograms
-- kept in the kernel over the whole system while the run lasted. Hard
-- interrupts are those with a registered handler (devices); the local timer
-- and IPIs are architecture vectors that the irq tracepoints do not see.
CREATE TABLE irq_hist (
  run_id INTEGER NOT NULL REFERENCES run(id),
  cpu INTEGER NOT NULL,              -- CPU the handlers ran on
  kind TEXT NOT NULL,                -- hard (an interrupt handler) | soft (a softirq vector)
  vec INTEGER NOT NULL,              -- hard: irq number; soft: vector (0 HI ... 9 RCU)
  name TEXT NOT NULL,                -- hard: the handler's name (first one seen on a shared line); soft: TIMER, NET_RX, ...
  slot INTEGER NOT NULL,             -- floor(log2(handler time in ns))
  lo_ns INTEGER NOT NULL,            -- bucket lower bound, ns (2^slot; 0 for slot 0)
  hi_ns INTEGER NOT NULL,            -- bucket upper bound, ns, exclusive (2^(slot+1))
  count INTEGER NOT NULL,            -- handler runs in the bucket
  sum_ns INTEGER NOT NULL,           -- their summed time, ns (soft: without hard interrupts inside)
  PRIMARY KEY (run_id, cpu, kind, vec, slot)
);

-- Single handler runs at or above the threshold (run.irq_min_ns).
CREATE TABLE irq_run (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start at handler entry
  dur INTEGER NOT NULL,              -- ns in the handler (soft: without hard interrupts inside)
  cpu INTEGER NOT NULL,              -- CPU the handler ran on
  kind TEXT NOT NULL,                -- hard | soft
  vec INTEGER NOT NULL,              -- irq number or softirq vector
  name TEXT NOT NULL,                -- handler or vector name
  ret INTEGER NOT NULL,              -- hard: irqreturn_t (0 none, 1 handled, 2 wake thread); soft: 0
  pid INTEGER NOT NULL,              -- process interrupted (0: the CPU was idle)
  tid INTEGER NOT NULL,              -- thread interrupted
  target INTEGER NOT NULL            -- 1 if the interrupted process belongs to the traced tree
);

-- @sched tables
-- Off-CPU intervals of traced threads at least offcpu_min_ns long
-- (run.offcpu_min_ns), from sched_switch out to sched_switch back in.
CREATE TABLE offcpu (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start when the thread left the CPU
  dur INTEGER NOT NULL,              -- ns until it ran again (sleep plus run-queue wait)
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  cpu INTEGER NOT NULL,              -- CPU it left
  state INTEGER NOT NULL,            -- task state bits when it left: 0 runnable (preempted or yielded),
                                     -- 1 interruptible sleep (S), 2 uninterruptible (D), 0x402 idle wait (I),
                                     -- 4 stopped, 8 traced
  kernel_stack_id INTEGER NOT NULL,  -- kernel stack at switch-out (-> stack.id; 0 = none)
  user_stack_id INTEGER NOT NULL,    -- user stack at switch-out (-> stack.id; needs frame pointers)
  wake_ts INTEGER,                   -- ns since run start of the wakeup that made it runnable; NULL: none seen
                                     -- (preempted, or woken before the interval began)
  waker_pid INTEGER,                 -- process current at the wakeup (any process; 0 = idle CPU, e.g. a timer)
  waker_tid INTEGER,                 -- thread current at the wakeup (0 = idle CPU)
  waker_comm TEXT,                   -- its task name
  waker_kernel_stack_id INTEGER,     -- kernel stack of the wakeup (-> stack.id); shows an interrupt if one woke it
  waker_user_stack_id INTEGER        -- user stack of the waker when it is traced itself (-> stack.id; 0 otherwise)
);
CREATE INDEX offcpu_by_thread ON offcpu (run_id, tid, ts);

-- @cpu tables
-- Samples of traced threads on the software cpu-clock event at freq_hz
-- (run.cpu_freq_hz) per CPU.
CREATE TABLE cpu_sample (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,
  cpu INTEGER NOT NULL,              -- CPU the sample was taken on
  kernel INTEGER NOT NULL,           -- 1 if the sample interrupted kernel code, 0 user code
  ip INTEGER NOT NULL,               -- interrupted instruction pointer (a kernel address when kernel = 1)
  user_stack_id INTEGER NOT NULL,    -- user stack, innermost first (-> stack.id); its first frame is the
                                     -- user IP (where the thread entered the kernel when kernel = 1)
  kernel_stack_id INTEGER NOT NULL   -- kernel stack (-> stack.id; 0 when kernel = 0)
);
CREATE INDEX cpu_sample_by_time ON cpu_sample (run_id, ts);

-- Executable memory mappings of traced processes: every vma a sampled user
-- frame fell in (taken in the kernel, so it exists even if the process
-- exited at once), plus the executable mappings in /proc/PID/maps when the
-- process was first sampled. A pid that execs again has mappings with
-- later ts; resolve an address with the latest mapping whose ts is not after it.
CREATE TABLE mapping (
  run_id INTEGER NOT NULL REFERENCES run(id),
  ts INTEGER NOT NULL,               -- ns since run start when first seen
  pid INTEGER NOT NULL,
  vm_start INTEGER NOT NULL,         -- first address, bytes
  vm_end INTEGER NOT NULL,           -- one past the last address, bytes
  file_off INTEGER NOT NULL,         -- file offset mapped at vm_start, bytes (address - vm_start + file_off)
  dev INTEGER NOT NULL,              -- 0 for memory without a file
  ino INTEGER NOT NULL,              -- 0 for memory without a file
  path TEXT NOT NULL,                -- absolute path in the process's mount namespace; '[vdso]'; '' anonymous;
                                     -- a leading '...' when it was too deep to walk whole
  build_id TEXT,                     -- GNU build-id of the file, lowercase hex; NULL if none or unreadable
  PRIMARY KEY (run_id, pid, vm_start, ino)
);

-- The lines of /proc/kallsyms a run's kernel stacks need, stored once per
-- distinct content: for each kernel address in the run's stacks, the code
-- symbol at or below it (what symbolizing looks up). Runs recorded before
-- schema version 4 stored the whole file (it changes with each boot's KASLR
-- offset and with module loads); a run without kernel stacks has none.
CREATE TABLE kallsyms (
  hash TEXT PRIMARY KEY,             -- FNV-1a 64-bit hash of text, 16 hex digits
  size INTEGER NOT NULL,             -- bytes of text
  text TEXT NOT NULL                 -- "address type name[\t[module]]" lines as the file has them, without
                                     -- JIT-ed BPF programs and ftrace trampolines ([bpf], [__builtin__ftrace])
);

-- The kernel symbols in force during a run.
CREATE TABLE run_kallsyms (
  run_id INTEGER NOT NULL REFERENCES run(id),
  hash TEXT NOT NULL REFERENCES kallsyms(hash),  -- the kallsyms text in force (-> kallsyms.hash)
  PRIMARY KEY (run_id)
);

-- The block devices of the machine when the run started (schema version 6),
-- from /sys/dev/block. A device's own page cache (where file systems keep
-- the metadata they read) is an inode of the kernel's bdev file system,
-- numbered by the device's kernel dev_t: analyses tell it from a file by
-- this table, not by looking at the machine they run on.
CREATE TABLE run_block_device (
  run_id INTEGER NOT NULL REFERENCES run(id),
  major INTEGER NOT NULL,            -- the device's major number, as in /sys/dev/block/MAJOR:MINOR
  minor INTEGER NOT NULL,            -- its minor number
  PRIMARY KEY (run_id, major, minor)
);
