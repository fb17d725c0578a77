-- ===- profile.sql - the syspgo profile database, schema version 1 -------=== --
-- One SQLite file holds many runs; every event table carries run_id (-> run.id).
-- Units: ts = nanoseconds since the run's start (run.start_monotonic_ns) on
-- CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads; dur = nanoseconds;
-- sizes and offsets in bytes unless a column says pages. dev is the device
-- number as stat(2) reports it in st_dev (makedev(major, minor)); ino is the
-- inode number (st_ino). pid is the process (thread group) id, tid the thread.
-- Raw event tables are written only by collect/; derived tables only by the
-- analyze/ pass that owns them. profile_db.cc applies this file to a new
-- database in one transaction and sets PRAGMA application_id / user_version.

-- One collection: what ran, where, and how the collection went.
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
  settings_json TEXT NOT NULL,       -- probe groups and tuning knobs in force, JSON
  events_recorded INTEGER NOT NULL DEFAULT 0,  -- events written to this database
  events_dropped INTEGER NOT NULL DEFAULT 0    -- events lost in the kernel (sum of run_drop)
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

-- Files seen in the run, keyed by (dev, ino), with the absolute path they were
-- opened by (resolved in the kernel from the dentry chain; the first path wins).
CREATE TABLE file (
  run_id INTEGER NOT NULL REFERENCES run(id),
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  path TEXT NOT NULL,                -- absolute path; '...' first if deeper than the walk (48 levels)
  PRIMARY KEY (run_id, dev, ino)
);

-- x86_64 syscall numbers recorded by the fileio group, and their names.
CREATE TABLE syscall_name (
  nr INTEGER PRIMARY KEY,            -- syscall number on x86_64
  name TEXT NOT NULL                 -- its name as in syscalls(2)
);
INSERT INTO syscall_name (nr, name) VALUES
  (0, 'read'), (1, 'write'), (2, 'open'), (3, 'close'), (9, 'mmap'),
  (17, 'pread64'), (18, 'pwrite64'), (19, 'readv'), (20, 'writev'),
  (74, 'fsync'), (75, 'fdatasync'), (257, 'openat'), (277, 'sync_file_range'),
  (295, 'preadv'), (296, 'pwritev'), (327, 'preadv2'), (328, 'pwritev2'),
  (437, 'openat2');

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

-- @pagecache tables

-- @block tables

-- @irq tables

-- @sched tables

-- @cpu tables
