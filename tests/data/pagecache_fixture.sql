-- Fixture for the pagecache pass (tests/analyze_pagecache_test.cc): one run
-- of a program "service" (pid 200) in the memory cgroup /svc/syspgo-thrash-1
-- (id 500, limit 1 MiB). Times are ns since the run's start; the command
-- starts at 1 s and the run ends at 3 s (wall time 2 s).
--  * /opt/svc/lib/libbig.so (dev 2049, ino 21), 64 pages: every page is
--    deleted at 1.0 s by drop_caches (bash, before the program starts), so
--    its first reads at 1.1 s (four 16-page folios) are refaults the pass
--    must not count as churn. At 1.2 s memcg reclaim in the service itself
--    (try_to_free_mem_cgroup_pages) deletes pages 0..31, and at 1.3 s they
--    are read again: 32 pages of churn (128 KiB), 50% of the 65 pages the
--    service touched (the 64 added plus a fault on page 70). Block reads of
--    the file: 256 KiB at 1.1 s (2 ms), then 128 KiB at 1.3 s (3 ms), after
--    the reclaim. Churn: a finding, and a limit of 1 MiB + 260 KiB rounded
--    up to whole MiB = 2 MiB.
--  * /data/log.txt (ino 22): 8 pages added, deleted by an unlink
--    (truncation) at 1.5 s and added again as new data at 1.6 s: refaults,
--    but never churn.
--  * /usr/lib/libc.so.6 (ino 23), charged to the root cgroup: 4 pages
--    deleted by kswapd0 at 1.7 s and read again at 1.8 s: reclaim, but
--    below the 16 pages the pass needs for a finding.
INSERT INTO run (id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version,
                 start_realtime_ns, start_monotonic_ns, status, command_start_ts, end_ts)
VALUES (1, 'service --lib /opt/svc/lib/libbig.so', '["service", "--lib", "/opt/svc/lib/libbig.so"]', 200, 0, 'h', 'k',
        'v', 0, 0, 'complete', 1000000000, 3000000000);
INSERT INTO run_probe (run_id, probe_group, attached, detail, events) VALUES
  (1, 'pagecache', 1, '', 0), (1, 'faults', 1, '', 0), (1, 'block', 1, '', 0);
INSERT INTO file (run_id, dev, ino, path) VALUES
  (1, 2049, 21, '/opt/svc/lib/libbig.so'), (1, 2049, 22, '/data/log.txt'), (1, 2049, 23, '/usr/lib/libc.so.6');
INSERT INTO memory_cgroup (run_id, id, path, limit_bytes) VALUES
  (1, 1, '/', 9223372036854771712), (1, 500, '/svc/syspgo-thrash-1', 1048576);

-- Kernel symbols 0x100 apart; frames point 0x10 into them.
-- 0xffffffffc0001000 is the probe's JIT-ed program, which kallsyms does not list.
INSERT INTO kallsyms (hash, size, text) VALUES ('fedcba9876543210', 0,
'ffffffff81000000 T _stext
ffffffff81000100 T bpf_trace_run2
ffffffff81000200 T __traceiter_mm_filemap_delete_from_page_cache
ffffffff81000300 T __filemap_remove_folio
ffffffff81000400 T shrink_folio_list
ffffffff81000500 T shrink_lruvec
ffffffff81000600 T try_to_free_mem_cgroup_pages
ffffffff81000700 T try_charge_memcg
ffffffff81000800 T __mem_cgroup_charge
ffffffff81000900 T filemap_add_folio
ffffffff81000a00 T filemap_fault
ffffffff81000b00 T balance_pgdat
ffffffff81000c00 T kswapd
ffffffff81000d00 T drop_pagecache_sb
ffffffff81000e00 T drop_caches_sysctl_handler
ffffffff81000f00 T truncate_inode_pages_range
ffffffff81001000 T evict
ffffffff81001100 T do_unlinkat
ffffffff81001200 T __x64_sys_unlinkat
ffffffff81001300 T do_syscall_64
ffffffff81001400 T exc_page_fault
ffffffff81001500 T proc_sys_call_handler
ffffffff81001600 T kthread
ffffffff81001700 T reclaim_pages
ffffffff81001800 T damon_pa_apply_scheme
ffffffff81001900 T kdamond_fn
ffffffff81001a00 T _etext');
INSERT INTO run_kallsyms (run_id, hash) VALUES (1, 'fedcba9876543210');
INSERT INTO stack (run_id, id, frames) VALUES
  -- 1: memcg reclaim in a fault that charged a new page (filemap_fault -> ... -> try_to_free_mem_cgroup_pages)
  (1, 1, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff10040081ffffffff10050081ffffffff10060081ffffffff10070081ffffffff10080081ffffffff10090081ffffffff100a0081ffffffff10140081ffffffff'),
  -- 2: kswapd
  (1, 2, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff10040081ffffffff10050081ffffffff100b0081ffffffff100c0081ffffffff10160081ffffffff'),
  -- 3: echo 3 > /proc/sys/vm/drop_caches
  (1, 3, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff100d0081ffffffff100e0081ffffffff10150081ffffffff10130081ffffffff'),
  -- 4: unlink of the last name: evict -> truncate_inode_pages_range
  (1, 4, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff100f0081ffffffff10100081ffffffff10110081ffffffff10120081ffffffff10130081ffffffff'),
  -- 5: DAMON's pageout scheme (kdamond): not used by the rows here, but by
  -- AnalyzePagecache.DamonPageoutIsNamedAndNoLimitIsSuggested
  (1, 5, X'001000c0ffffffff10010081ffffffff10020081ffffffff10030081ffffffff10040081ffffffff10170081ffffffff10180081ffffffff10190081ffffffff10160081ffffffff');

INSERT INTO page_cache (run_id, ts, op, pid, tid, comm, dev, ino, idx, pages, task_cgroup, page_cgroup, why, stack_id) VALUES
  -- libbig.so: drop_caches by the runner's shell (root cgroup), before the program
  (1, 1000000000, 2, 150, 150, 'bash', 2049, 21, 0, 16, 1, 1, 2, 3),
  (1, 1000000100, 2, 150, 150, 'bash', 2049, 21, 16, 16, 1, 1, 2, 3),
  (1, 1000000200, 2, 150, 150, 'bash', 2049, 21, 32, 16, 1, 1, 2, 3),
  (1, 1000000300, 2, 150, 150, 'bash', 2049, 21, 48, 16, 1, 1, 2, 3),
  -- its first reads, charged to the service's cgroup
  (1, 1100000000, 1, 200, 200, 'service', 2049, 21, 0, 16, 500, 500, 5, 0),
  (1, 1100000100, 1, 200, 200, 'service', 2049, 21, 16, 16, 500, 500, 5, 0),
  (1, 1100000200, 1, 200, 200, 'service', 2049, 21, 32, 16, 500, 500, 5, 0),
  (1, 1100000300, 1, 200, 200, 'service', 2049, 21, 48, 16, 500, 500, 5, 0),
  -- memcg reclaim in the service deletes pages 0..31
  (1, 1200000000, 2, 200, 200, 'service', 2049, 21, 0, 16, 500, 500, 5, 1),
  (1, 1200000100, 2, 200, 200, 'service', 2049, 21, 16, 16, 500, 500, 5, 1),
  -- and they are read again
  (1, 1300000000, 1, 200, 200, 'service', 2049, 21, 0, 16, 500, 500, 5, 0),
  (1, 1300000100, 1, 200, 200, 'service', 2049, 21, 16, 16, 500, 500, 5, 0),
  -- log.txt: written, unlinked, written anew
  (1, 1400000000, 1, 200, 200, 'service', 2049, 22, 0, 8, 500, 500, 3, 0),
  (1, 1500000000, 2, 200, 200, 'service', 2049, 22, 0, 8, 500, 500, 3, 4),
  (1, 1600000000, 1, 200, 200, 'service', 2049, 22, 0, 8, 500, 500, 3, 0),
  -- libc: 4 pages reclaimed by kswapd0 and read again
  (1, 1700000000, 2, 60, 60, 'kswapd0', 2049, 23, 10, 4, 0, 1, 2, 2),
  (1, 1800000000, 1, 200, 200, 'service', 2049, 23, 10, 4, 500, 1, 3, 0);

INSERT INTO page_fault (run_id, ts, pid, tid, addr, ip, error_code, dev, ino, pgoff, vm_start, vm_flags, major,
                        filemap, around_first, around_last) VALUES
  (1, 1100000000, 200, 200, 140000000000000, 140000000000000, 20, 2049, 21, 0, 140000000000000, 5, 1, 1, -1, -1),
  (1, 1250000000, 200, 200, 140000000286720, 140000000286720, 20, 2049, 21, 70, 140000000000000, 5, 0, 1, -1, -1);

INSERT INTO block_op (run_id, op, name) VALUES (1, 0, 'read'), (1, 1, 'write');
INSERT INTO block_rq (run_id, ts, dur, queue_dur, dev, part_dev, sector, bytes, op, flags, cmd_flags, error, pid, tid,
                      comm, target, issue_pid, issue_tid, file_dev, file_ino, file_index) VALUES
  (1, 1100000000, 2000000, NULL, 2048, 2049, 8000, 262144, 0, 16, 0, 0, 200, 200, 'service', 1, 200, 200, 2049, 21, 0),
  (1, 1300000000, 3000000, NULL, 2048, 2049, 8000, 131072, 0, 16, 0, 0, 200, 200, 'service', 1, 200, 200, 2049, 21, 0),
  -- a write of log.txt: not a read
  (1, 1450000000, 1000000, NULL, 2048, 2049, 9000, 32768, 1, 1, 0, 0, 200, 200, 'service', 1, 200, 200, 2049, 22, 0);
