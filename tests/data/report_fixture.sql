-- ===- report_fixture.sql - a small run for the report and trace tests --=== --
-- Run 1: fixture_app (pid 100) reads /data/input.txt on its main thread,
-- then sleeps (S) until its writer thread (tid 101) is done; the writer
-- checkpoints /data/ckpt.bin three times, 0.5 s apart: a 50 MB write and an
-- fsync, each waiting on the disk (D), with two write requests in flight
-- together and the flush the fsync asked for. kswapd drops the checkpoint's
-- pages and input.txt's, which the main thread reads again at 1.6 s (a
-- refault of 16 pages). A helper process (pid 200) fails to open a file,
-- writes to a pipe and is preempted once. No CPU samples: the flame graph
-- says why. Run 2 is a second run without events (the newest).
-- Devices: 2048 = makedev(8, 0) the disk, 2049 = makedev(8, 1) its partition.
INSERT INTO run (id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version,
                 start_realtime_ns, start_monotonic_ns, command_start_ts, end_ts, status, collector_pid,
                 boot_id, exit_reason, exit_code, offcpu_min_ns, events_recorded, events_dropped) VALUES
  (1, 'fixture_app --steps 3', '["fixture_app", "--steps", "3"]', 100, 0, 'fixture', '6.1.0-test', '0.1.0',
   1700000000000000000, 5000000000, 100000000, 2100000000, 'complete', 0, '', 'exited', 0, 1000000, 71, 0),
  (2, 'true', '["true"]', 300, 0, 'fixture', '6.1.0-test', '0.1.0',
   1700000100000000000, 9000000000, 50000000, 60000000, 'complete', 0, '', 'exited', 0, 1000000, 2, 0);
INSERT INTO run_setting_probe (run_id, position, probe_group) VALUES
  (1, 0, 'proc'), (1, 1, 'fileio'), (1, 2, 'pagecache'), (1, 3, 'block'), (1, 4, 'sched'), (2, 0, 'proc');

INSERT INTO run_probe (run_id, probe_group, attached, detail, events) VALUES
  (1, 'proc', 1, '', 6), (1, 'fileio', 1, '', 24), (1, 'pagecache', 1, '', 27), (1, 'block', 1, '', 10),
  (1, 'sched', 1, '', 8), (1, 'cpu', 0, 'switched off with --probes', 0),
  (2, 'proc', 1, '', 2);

INSERT INTO process (run_id, pid, ppid, comm, exe, argv, start_ts, exit_ts, exit_code) VALUES
  (1, 100, 1, 'fixture_app', '/usr/bin/fixture_app', 'fixture_app --steps 3', 100000000, 2050000000, 0),
  (1, 200, 100, 'helper', '/usr/bin/helper', 'helper', 1000000000, 1500000000, 0),
  (2, 300, 1, 'true', '/usr/bin/true', 'true', 50000000, 51000000, 0);

INSERT INTO thread (run_id, tid, pid, comm, start_ts, exit_ts) VALUES
  (1, 100, 100, 'fixture_app', 100000000, 2050000000),
  (1, 101, 100, 'writer', 120000000, 2000000000),
  (1, 200, 200, 'helper', 1000000000, 1500000000),
  (2, 300, 300, 'true', 50000000, 51000000);

INSERT INTO file (run_id, dev, ino, path) VALUES
  (1, 2049, 11, '/data/ckpt.bin'),
  (1, 2049, 12, '/data/input.txt');

INSERT INTO block_op (run_id, op, name) VALUES
  (1, 0, 'read'), (1, 1, 'write'), (1, 2, 'flush');

INSERT INTO block_latency_hist (run_id, dev, part_dev, op, slot, lo_ns, hi_ns, count, sum_ns) VALUES
  (1, 2048, 2049, 0, 16, 65536, 131072, 1, 80000),
  (1, 2048, 2049, 1, 23, 8388608, 16777216, 6, 81000000),
  (1, 2048, 2048, 2, 19, 524288, 1048576, 3, 3000000);

INSERT INTO memory_cgroup (run_id, id, path, limit_bytes) VALUES
  (1, 7, '/syspgo-test', 104857600);

INSERT INTO file_open (run_id, ts, dur, pid, tid, nr, path, flags, ret, dev, ino) VALUES
  (1, 150000000, 20000, 100, 100, 257, '/data/input.txt', 0, 3, 2049, 12),
  (1, 500000000, 30000, 100, 101, 257, '/data/ckpt.bin', 577, 4, 2049, 11),
  (1, 1000000000, 30000, 100, 101, 257, '/data/ckpt.bin', 577, 4, 2049, 11),
  (1, 1100000000, 15000, 200, 200, 257, '/data/missing', 0, -2, 0, 0),
  (1, 1500000000, 30000, 100, 101, 257, '/data/ckpt.bin', 577, 4, 2049, 11);

INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret) VALUES
  (1, 151000000, 100000, 100, 100, 0, 3, 2049, 12, 32768, 0, 65536, 65536),
  (1, 152000000, 100000, 100, 100, 0, 3, 2049, 12, 32768, 65536, 65536, 65536),
  (1, 153000000, 100000, 100, 100, 0, 3, 2049, 12, 32768, 131072, 65536, 65536),
  (1, 154000000, 100000, 100, 100, 0, 3, 2049, 12, 32768, 196608, 65536, 65536),
  (1, 155000000, 100000, 100, 100, 0, 3, 2049, 12, 32768, 262144, 65536, 65536),
  (1, 460000000, 2000, 100, 100, 3, 3, 2049, 12, 32768, -1, 0, 0),
  (1, 500100000, 50000000, 100, 101, 1, 4, 2049, 11, 32768, 0, 52428800, 52428800),
  (1, 551000000, 80000000, 100, 101, 74, 4, 2049, 11, 32768, -1, 0, 0),
  (1, 631500000, 5000, 100, 101, 3, 4, 2049, 11, 32768, -1, 0, 0),
  (1, 1000100000, 50000000, 100, 101, 1, 4, 2049, 11, 32768, 0, 52428800, 52428800),
  (1, 1051000000, 80000000, 100, 101, 74, 4, 2049, 11, 32768, -1, 0, 0),
  (1, 1131500000, 5000, 100, 101, 3, 4, 2049, 11, 32768, -1, 0, 0),
  (1, 1200000000, 8000, 200, 200, 1, 1, 13, 999, 4096, -1, 10, 10),
  (1, 1500100000, 50000000, 100, 101, 1, 4, 2049, 11, 32768, 0, 52428800, 52428800),
  (1, 1551000000, 80000000, 100, 101, 74, 4, 2049, 11, 32768, -1, 0, 0),
  (1, 1631500000, 5000, 100, 101, 3, 4, 2049, 11, 32768, -1, 0, 0);

INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts, waker_pid, waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id) VALUES
  (1, 200000000, 250000000, 100, 100, 0, 1, 0, 0, 449000000, 100, 101, 'writer', 0, 0),
  (1, 510000000, 35000000, 100, 101, 1, 2, 0, 0, 544990000, 0, 0, 'swapper/1', 0, 0),
  (1, 552000000, 78000000, 100, 101, 0, 2, 0, 0, 629990000, 0, 0, 'swapper/0', 0, 0),
  (1, 1010000000, 35000000, 100, 101, 1, 2, 0, 0, 1044990000, 0, 0, 'swapper/1', 0, 0),
  (1, 1052000000, 78000000, 100, 101, 0, 2, 0, 0, 1129990000, 0, 0, 'swapper/0', 0, 0),
  (1, 1300000000, 3000000, 200, 200, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL),
  (1, 1510000000, 35000000, 100, 101, 1, 2, 0, 0, 1544990000, 0, 0, 'swapper/1', 0, 0),
  (1, 1552000000, 78000000, 100, 101, 0, 2, 0, 0, 1629990000, 0, 0, 'swapper/0', 0, 0);

INSERT INTO block_rq (run_id, ts, dur, queue_dur, dev, part_dev, sector, bytes, op, flags, cmd_flags, error, pid, tid, comm, target, issue_pid, issue_tid, file_dev, file_ino, file_index) VALUES
  (1, 151050000, 80000, 20000, 2048, 2049, 500, 65536, 0, 16, 0, 0, 100, 100, 'fixture_app', 1, 100, 100, 2049, 12, 0),
  (1, 520000000, 12000000, NULL, 2048, 2049, 1000, 1048576, 1, 1, 0, 0, 100, 101, 'writer', 1, 0, 0, 2049, 11, 0),
  (1, 521000000, 15000000, NULL, 2048, 2049, 3048, 1048576, 1, 1, 0, 0, 100, 101, 'writer', 1, 0, 0, 2049, 11, 256),
  (1, 560000000, 1000000, NULL, 2048, 2048, -1, 0, 2, 8, 0, 0, 0, 0, '', 0, 0, 0, 0, 0, 0),
  (1, 1020000000, 12000000, NULL, 2048, 2049, 11000, 1048576, 1, 1, 0, 0, 100, 101, 'writer', 1, 0, 0, 2049, 11, 0),
  (1, 1021000000, 15000000, NULL, 2048, 2049, 13048, 1048576, 1, 1, 0, 0, 100, 101, 'writer', 1, 0, 0, 2049, 11, 256),
  (1, 1060000000, 1000000, NULL, 2048, 2048, -1, 0, 2, 8, 0, 0, 0, 0, '', 0, 0, 0, 0, 0, 0),
  (1, 1520000000, 12000000, NULL, 2048, 2049, 21000, 1048576, 1, 1, 0, 0, 100, 101, 'writer', 1, 0, 0, 2049, 11, 0),
  (1, 1521000000, 15000000, NULL, 2048, 2049, 23048, 1048576, 1, 1, 0, 0, 100, 101, 'writer', 1, 0, 0, 2049, 11, 256),
  (1, 1560000000, 1000000, NULL, 2048, 2048, -1, 0, 2, 8, 0, 0, 0, 0, '', 0, 0, 0, 0, 0, 0);

INSERT INTO page_cache (run_id, ts, op, pid, tid, comm, dev, ino, idx, pages, task_cgroup, page_cgroup, why, stack_id) VALUES
  (1, 160000000, 1, 100, 100, 'fixture_app', 2049, 12, 0, 16, 7, 7, 1, 0),
  (1, 501000000, 1, 100, 101, 'writer', 2049, 11, 0, 4, 7, 7, 1, 0),
  (1, 501001000, 1, 100, 101, 'writer', 2049, 11, 4, 4, 7, 7, 1, 0),
  (1, 501002000, 1, 100, 101, 'writer', 2049, 11, 8, 4, 7, 7, 1, 0),
  (1, 501003000, 1, 100, 101, 'writer', 2049, 11, 12, 4, 7, 7, 1, 0),
  (1, 700000000, 2, 50, 50, 'kswapd0', 2049, 12, 0, 16, 0, 7, 2, 0),
  (1, 800000000, 2, 50, 50, 'kswapd0', 2049, 11, 0, 4, 0, 7, 2, 0),
  (1, 800001000, 2, 50, 50, 'kswapd0', 2049, 11, 4, 4, 0, 7, 2, 0),
  (1, 800002000, 2, 50, 50, 'kswapd0', 2049, 11, 8, 4, 0, 7, 2, 0),
  (1, 800003000, 2, 50, 50, 'kswapd0', 2049, 11, 12, 4, 0, 7, 2, 0),
  (1, 1001000000, 1, 100, 101, 'writer', 2049, 11, 0, 4, 7, 7, 1, 0),
  (1, 1001001000, 1, 100, 101, 'writer', 2049, 11, 4, 4, 7, 7, 1, 0),
  (1, 1001002000, 1, 100, 101, 'writer', 2049, 11, 8, 4, 7, 7, 1, 0),
  (1, 1001003000, 1, 100, 101, 'writer', 2049, 11, 12, 4, 7, 7, 1, 0),
  (1, 1300000000, 2, 50, 50, 'kswapd0', 2049, 11, 0, 4, 0, 7, 2, 0),
  (1, 1300001000, 2, 50, 50, 'kswapd0', 2049, 11, 4, 4, 0, 7, 2, 0),
  (1, 1300002000, 2, 50, 50, 'kswapd0', 2049, 11, 8, 4, 0, 7, 2, 0),
  (1, 1300003000, 2, 50, 50, 'kswapd0', 2049, 11, 12, 4, 0, 7, 2, 0),
  (1, 1501000000, 1, 100, 101, 'writer', 2049, 11, 0, 4, 7, 7, 1, 0),
  (1, 1501001000, 1, 100, 101, 'writer', 2049, 11, 4, 4, 7, 7, 1, 0),
  (1, 1501002000, 1, 100, 101, 'writer', 2049, 11, 8, 4, 7, 7, 1, 0),
  (1, 1501003000, 1, 100, 101, 'writer', 2049, 11, 12, 4, 7, 7, 1, 0),
  (1, 1600000000, 1, 100, 100, 'fixture_app', 2049, 12, 0, 16, 7, 7, 1, 0),
  (1, 1800000000, 2, 50, 50, 'kswapd0', 2049, 11, 0, 4, 0, 7, 2, 0),
  (1, 1800001000, 2, 50, 50, 'kswapd0', 2049, 11, 4, 4, 0, 7, 2, 0),
  (1, 1800002000, 2, 50, 50, 'kswapd0', 2049, 11, 8, 4, 0, 7, 2, 0),
  (1, 1800003000, 2, 50, 50, 'kswapd0', 2049, 11, 12, 4, 0, 7, 2, 0);

