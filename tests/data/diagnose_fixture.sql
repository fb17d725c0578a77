-- Fixture for analyze_diagnose_test: one run of a program "train" (pid 100)
-- whose threads wait in every way the stalls pass must tell apart. The same
-- tables feed the io, block and offcpu passes, so they share this fixture;
-- each pass has its own expected output beside it (<pass>_expected.*).
--
-- Times are ns since the run's start; the command starts at 1 s, the run
-- ends at 11 s (wall time 10 s).
--  * train (tid 100, main thread) checkpoints at 2, 4 and 6 s: openat of
--    /data/ckpt/step-<4|8|12>.bin (the SAME inode 11 every time: the file
--    is deleted and recreated, and the file table keeps the first name),
--    4 writes of 1 MiB, fsync (off-CPU 35 ms waiting for writeback), close,
--    then unlink (not recorded by fileio; off-CPU 12 ms in discard, named
--    from its kernel stack). Its block requests: 4 MiB of writes of that
--    file and a 4 MiB discard, issued by the thread. Between checkpoints it
--    prints one progress line per 0.5 s step (write to fd 1, a pipe):
--    4 steps per checkpoint. At 7 s it is preempted for 15 ms.
--  * sleeper (tid 102) sleeps 200 ms in clock_nanosleep at 3.1 and 5.1 s.
--  * loader (tid 101) blocks 150 ms reading an empty pipe at 3.5 s, woken
--    by train writing to it; another process's disk read completes in
--    that window and must not be blamed on the loader. A 5 ms wait of it
--    is under the threshold.
--  * waiter (tid 103) waits 50 ms on a futex at 7.2 s, woken by train.
INSERT INTO run (id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version,
                 start_realtime_ns, start_monotonic_ns, status, command_start_ts, end_ts)
VALUES (1, 'train --ckpt /data/ckpt', '["train", "--ckpt", "/data/ckpt"]', 100, 0, 'h', 'k', 'v', 0, 0,
        'complete', 1000000000, 11000000000);
INSERT INTO run_probe (run_id, probe_group, attached, detail, events) VALUES
  (1, 'fileio', 1, '', 0), (1, 'sched', 1, '', 0), (1, 'block', 1, '', 0);
INSERT INTO process (run_id, pid, ppid, comm, exe, argv, start_ts) VALUES
  (1, 100, 1, 'train', '/opt/train/bin/train', 'train --ckpt /data/ckpt', 0),
  (1, 300, 1, 'other', '/usr/bin/other', 'other', 0);
INSERT INTO thread (run_id, tid, pid, comm, start_ts) VALUES
  (1, 100, 100, 'train', 0), (1, 101, 100, 'loader', 1000), (1, 102, 100, 'sleeper', 1000),
  (1, 103, 100, 'waiter', 1000);
INSERT INTO file (run_id, dev, ino, path) VALUES (1, 2049, 11, '/data/ckpt/step-4.bin');

-- Kernel symbols 0x100 apart; frames point 0x10 into them. 0xffffffffc0001000
-- is the probe's JIT-ed program, which kallsyms does not list.
INSERT INTO kallsyms (hash, size, text) VALUES ('00000000000f1d7e', 0,
'ffffffff81000000 T _stext
ffffffff81000100 T bpf_trace_run4
ffffffff81000200 T __traceiter_sched_switch
ffffffff81000300 T __schedule
ffffffff81000400 T schedule
ffffffff81000500 T io_schedule
ffffffff81000600 T folio_wait_writeback
ffffffff81000700 T file_write_and_wait_range
ffffffff81000800 T do_fsync
ffffffff81000900 T __x64_sys_fsync
ffffffff81000a00 T do_syscall_64
ffffffff81000b00 T entry_SYSCALL_64_after_hwframe
ffffffff81000c00 T blkdev_issue_discard
ffffffff81000d00 T do_unlinkat
ffffffff81000e00 T __x64_sys_unlink
ffffffff81000f00 T hrtimer_nanosleep
ffffffff81001000 T __x64_sys_clock_nanosleep
ffffffff81001100 T pipe_read
ffffffff81001200 T vfs_read
ffffffff81001300 T ksys_read
ffffffff81001400 T futex_wait_queue
ffffffff81001500 T __x64_sys_futex
ffffffff81001600 T irqentry_exit_to_user_mode
ffffffff81001700 T asm_sysvec_apic_timer_interrupt
ffffffff81001800 T try_to_wake_up
ffffffff81001900 T blk_mq_end_request
ffffffff81001a00 T virtblk_done
ffffffff81001b00 T asm_common_interrupt
ffffffff81001c00 T pipe_write
ffffffff81001d00 T hrtimer_wakeup
ffffffff81001e00 T futex_wake
ffffffff81001f00 T _etext');
INSERT INTO run_kallsyms (run_id, hash) VALUES (1, '00000000000f1d7e');

-- The binary's one mapping; /opt/train/bin/train does not exist here, so
-- user frames show as train+0xOFFSET.
INSERT INTO mapping (run_id, ts, pid, vm_start, vm_end, file_off, dev, ino, path, build_id) VALUES
  (1, 0, 100, 4194304, 5242880, 0, 2049, 5, '/opt/train/bin/train', NULL);

INSERT INTO stack (run_id, id, frames) VALUES
  -- 1: fsync waiting for writeback
  (1, 1, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff10040081ffffffff10050081ffffffff10060081ffffffff10070081ffffffff10080081ffffffff10090081ffffffff100a0081ffffffff100b0081ffffffff'),
  -- 2: unlink waiting for discard
  (1, 2, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff10040081ffffffff10050081ffffffff100c0081ffffffff100d0081ffffffff100e0081ffffffff100a0081ffffffff100b0081ffffffff'),
  -- 3: clock_nanosleep
  (1, 3, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff10040081ffffffff100f0081ffffffff10100081ffffffff100a0081ffffffff100b0081ffffffff'),
  -- 4: read of an empty pipe
  (1, 4, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff10040081ffffffff10110081ffffffff10120081ffffffff10130081ffffffff100a0081ffffffff100b0081ffffffff'),
  -- 5: futex wait
  (1, 5, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff10040081ffffffff10140081ffffffff10150081ffffffff100a0081ffffffff100b0081ffffffff'),
  -- 6: preempted in user mode by the timer tick
  (1, 6, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff10160081ffffffff10170081ffffffff'),
  -- 7: wakeup from a disk interrupt completing a request
  (1, 7, X'001000c0ffffffff10010081ffffffff10180081ffffffff10190081ffffffff101a0081ffffffff101b0081ffffffff'),
  -- 8: wakeup by a pipe write
  (1, 8, X'001000c0ffffffff10010081ffffffff10180081ffffffff101c0081ffffffff100a0081ffffffff100b0081ffffffff'),
  -- 9: wakeup by a timer
  (1, 9, X'001000c0ffffffff10010081ffffffff10180081ffffffff101d0081ffffffff10170081ffffffff'),
  -- 10: wakeup by futex_wake
  (1, 10, X'001000c0ffffffff10010081ffffffff10180081ffffffff101e0081ffffffff10150081ffffffff100a0081ffffffff100b0081ffffffff'),
  -- 11, 12: user stacks of train (0x401234 < 0x401500 < 0x401000; 0x401300 < 0x401500 < 0x401000)
  (1, 11, X'341240000000000000154000000000000010400000000000'),
  (1, 12, X'001340000000000000154000000000000010400000000000');

INSERT INTO block_op (run_id, op, name) VALUES (1, 0, 'read'), (1, 1, 'write'), (1, 3, 'discard');

-- The checkpoints. Each at B = 2, 4, 6 s (ck = 1, 2, 3; step = 4 * ck).
WITH ck(k) AS (VALUES (1), (2), (3))
INSERT INTO file_open (run_id, ts, dur, pid, tid, nr, path, flags, ret, dev, ino)
SELECT 1, k * 2000000000, 100000, 100, 100, 257, '/data/ckpt/step-' || (4 * k) || '.bin', 577, 3, 2049, 11 FROM ck;
WITH ck(k) AS (VALUES (1), (2), (3)), w(i) AS (VALUES (0), (1), (2), (3))
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret)
SELECT 1, k * 2000000000 + 200000 + i * 2000000, 1000000, 100, 100, 1, 3, 2049, 11, 32768, i * 1048576, 1048576,
       1048576
FROM ck, w;
WITH ck(k) AS (VALUES (1), (2), (3))
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret)
SELECT 1, k * 2000000000 + 7500000, 40000000, 100, 100, 74, 3, 2049, 11, 32768, -1, 0, 0 FROM ck
UNION ALL
SELECT 1, k * 2000000000 + 48000000, 10000, 100, 100, 3, 3, 2049, 11, 32768, -1, 0, 0 FROM ck;
WITH ck(k) AS (VALUES (1), (2), (3))
INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts, waker_pid,
                    waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id)
SELECT 1, k * 2000000000 + 8000000, 35000000, 100, 100, 0, 2, 1, 11, k * 2000000000 + 42990000, 0, 0, 'swapper/0', 7, 0
FROM ck
UNION ALL
SELECT 1, k * 2000000000 + 48500000, 12000000, 100, 100, 0, 2, 2, 12, k * 2000000000 + 60490000, 0, 0, 'swapper/0', 7,
       0
FROM ck;
WITH ck(k) AS (VALUES (1), (2), (3)), w(i, lat) AS (VALUES (0, 2000000), (1, 3000000), (2, 5000000), (3, 9000000))
INSERT INTO block_rq (run_id, ts, dur, queue_dur, dev, part_dev, sector, bytes, op, flags, cmd_flags, error, pid, tid,
                      comm, target, issue_pid, issue_tid, file_dev, file_ino, file_index)
SELECT 1, k * 2000000000 + 8500000 + i * 1000000, lat, 0, 2048, 2049, 1000 + i * 2048, 1048576, 1, 1, 0, 0, 100, 100,
       'train', 1, 100, 100, 2049, 11, i * 256
FROM ck, w
UNION ALL
SELECT 1, k * 2000000000 + 49000000, 10000000, 0, 2048, 2049, 1000, 4194304, 3, 0, 0, 0, 100, 100, 'train', 1, 100,
       100, 0, 0, 0
FROM ck;

-- Progress lines: one write to stdout (a pipe) per 0.5 s step.
WITH s(t) AS (VALUES (1300000000), (1800000000), (2300000000), (2800000000), (3300000000), (3800000000),
                     (4300000000), (4800000000), (5300000000), (5800000000), (6300000000))
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret)
SELECT 1, t, 20000, 100, 100, 1, 1, 14, 777, 4096, -1, 20, 20 FROM s;

-- sleeper: two 200 ms sleeps, woken by the timer on an idle CPU.
INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts, waker_pid,
                    waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id) VALUES
  (1, 3100000000, 200000000, 100, 102, 1, 1, 3, 0, 3299990000, 0, 0, 'swapper/1', 9, 0),
  (1, 5100000000, 200000000, 100, 102, 1, 1, 3, 0, 5299990000, 0, 0, 'swapper/1', 9, 0);

-- loader: 150 ms in read() of an empty pipe, woken by train's write; a
-- short wait; and another process's disk read meanwhile.
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret) VALUES
  (1, 3500000000, 150100000, 100, 101, 0, 5, 14, 778, 4096, -1, 4096, 4096),
  (1, 3649000000, 30000, 100, 100, 1, 6, 14, 778, 4096, -1, 4096, 4096);
INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts, waker_pid,
                    waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id) VALUES
  (1, 3500050000, 150000000, 100, 101, 1, 1, 4, 0, 3649010000, 100, 100, 'train', 8, 0),
  (1, 8000000000, 5000000, 100, 101, 1, 1, 4, 0, 8004990000, 100, 100, 'train', 8, 0);
INSERT INTO block_rq (run_id, ts, dur, queue_dur, dev, part_dev, sector, bytes, op, flags, cmd_flags, error, pid, tid,
                      comm, target, issue_pid, issue_tid, file_dev, file_ino, file_index) VALUES
  (1, 3520000000, 20000000, 0, 2048, 2049, 90000, 65536, 0, 1, 0, 0, 300, 300, 'other', 0, 300, 300, 2049, 99, 0);

-- waiter: 50 ms on a futex that train releases; train preempted 15 ms.
INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts, waker_pid,
                    waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id) VALUES
  (1, 7200000000, 50000000, 100, 103, 1, 1, 5, 0, 7249990000, 100, 100, 'train', 10, 0),
  (1, 7000000000, 15000000, 100, 100, 0, 0, 6, 11, NULL, NULL, NULL, NULL, NULL, NULL);

-- The kernel's latency histograms (block group): disk 8:0, partition 8:1.
INSERT INTO block_latency_hist (run_id, dev, part_dev, op, slot, lo_ns, hi_ns, count, sum_ns) VALUES
  (1, 2048, 2049, 1, 20, 1048576, 2097152, 3, 6000000), (1, 2048, 2049, 1, 21, 2097152, 4194304, 3, 9000000),
  (1, 2048, 2049, 1, 22, 4194304, 8388608, 3, 15000000), (1, 2048, 2049, 1, 23, 8388608, 16777216, 3, 27000000),
  (1, 2048, 2049, 3, 23, 8388608, 16777216, 3, 30000000), (1, 2048, 2049, 0, 24, 16777216, 33554432, 1, 20000000);
