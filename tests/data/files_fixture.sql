-- Fixture for analyze_files_test: two runs; run 1 touches a data file (10
-- writes of 1 MiB, one slow fsync, 2 reads), a log (small writes), a pipe,
-- and a file whose open was never seen (no path).
INSERT INTO run (id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version,
                 start_realtime_ns, start_monotonic_ns, status, end_ts)
VALUES (1, 'train', '["train"]', 100, 0, 'h', 'k', 'v', 0, 0, 'complete', 2000000000),
       (2, 'other', '["other"]', 200, 0, 'h', 'k', 'v', 0, 0, 'complete', 1000);
INSERT INTO file (run_id, dev, ino, path) VALUES
  (1, 2049, 11, '/data/ckpt.bin'), (1, 2049, 12, '/data/train.log');
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9)
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret)
SELECT 1, 1000 + i, 2000000, 100, 100, 1, 3, 2049, 11, 32768, i * 1048576, 1048576, 1048576 FROM n;
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret) VALUES
  (1, 5000, 180000000, 100, 100, 74, 3, 2049, 11, 32768, -1, 0, 0),
  (1, 6000, 1000000, 100, 100, 17, 3, 2049, 11, 32768, 0, 4096, 4096),
  (1, 6500, 1000000, 100, 100, 17, 3, 2049, 11, 32768, 4096, 4096, 4096),
  (1, 7000, 50000, 100, 101, 1, 4, 2049, 12, 32768, 0, 100, 100),
  (1, 7100, 70000, 100, 101, 1, 4, 2049, 12, 32768, 100, 100, 100),
  (1, 8000, 300000000, 100, 100, 0, 5, 14, 777, 4096, -1, 64, 64),
  (1, 9000, 10000, 100, 100, 0, 6, 2049, 99, 32768, 0, 512, 512),
  (1, 9500, 10000, 100, 100, 0, 7, 0, 0, 0, -1, 512, -9);
