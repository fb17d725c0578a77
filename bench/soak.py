#!/usr/bin/env python3
"""soak.py - does the collector's memory stay flat over a long run?

Records a steady, syscall-heavy load under `syspgo collect` (all probe
groups) for --minutes (default 10), sampling the collector's resident
memory (VmRSS in /proc/PID/status) every --interval seconds, and writes its
section of bench/RESULTS.md: RSS at the start, at every minute and at the
end, the database's growth beside it, and whether the RSS stayed flat.

Flat means: after the first minute (ring buffers mapped, the writer's
batches at their working size), the RSS never rises more than
max(8 MiB, 10 %) above its value at one minute. A leak, or a queue that
grows with the events, shows up as a steady climb instead.

The load, the same every second: a Python loop doing 1-byte pread/write
syscalls on a file at about --rate calls a second, plus a short-lived
process (fork, exec, exit) every 0.2 s, which exercises process tracking.
The rate is held below what the collector records, so the database grows
steadily (about 2 GB in 10 minutes at the default rate) instead of the run
measuring drops.

usage: sudo bench/soak.py [--minutes 10] [--interval 5] [--rate 30000] [--keep] [-v]
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import benchlib as B

LOAD = r"""
import os, subprocess, sys, time
path, rate, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"x" * 65536, 0)
null = os.open("/dev/null", os.O_WRONLY)
end = time.monotonic() + seconds
tick, per_tick, n, next_proc = 0.01, max(1, rate // 200), 0, 0.0
while True:
    now = time.monotonic()
    if now >= end:
        break
    for i in range(per_tick):  # two syscalls each
        os.write(null, os.pread(fd, 1, (n * 7919) % 65536))
        n += 1
    if now >= next_proc:
        subprocess.run(["true"])
        next_proc = now + 0.2
    spare = tick - (time.monotonic() - now)
    if spare > 0:
        time.sleep(spare)
print(n)
"""


def size(path):
    return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="length of the recorded load (default 10)")
    ap.add_argument("--interval", type=float, default=5.0, help="seconds between RSS samples (default 5)")
    ap.add_argument("--rate", type=int, default=30000, help="pread+write pairs a second (default 30000)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory and database")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every sample as it is taken")
    a = ap.parse_args()
    if a.minutes <= 0 or a.interval <= 0:
        sys.exit("soak: --minutes and --interval must be > 0")
    if os.geteuid() != 0:
        sys.exit("soak: syspgo collect needs root (CAP_BPF + CAP_PERFMON); run with sudo")
    if not os.access(B.SYSPGO, os.X_OK):
        sys.exit(f"soak: no syspgo at {B.SYSPGO}; build it or set SYSPGO_BUILD")
    work = tempfile.mkdtemp(prefix="syspgo-soak-", dir="/var/tmp")
    db = os.path.join(work, "soak.db")
    seconds = a.minutes * 60
    cmd = [B.SYSPGO, "collect", "-o", db, "--", sys.executable, "-c", LOAD, os.path.join(work, "data"),
           str(a.rate), str(seconds)]
    err_path = os.path.join(work, "collect.err")
    samples = []  # (seconds since start, VmRSS KiB, database bytes)
    with open(err_path, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        t0 = time.monotonic()
        time.sleep(a.interval)  # the first sample after the probes are loaded
        while p.poll() is None:
            r = B.status_kib(p.pid, "VmRSS")
            if r:
                samples.append((time.monotonic() - t0, r, size(db)))
                if a.verbose:
                    print(f"{samples[-1][0]:7.1f} s  VmRSS {r / 1024:7.1f} MiB  database {samples[-1][2] / 2**20:7.0f} MiB",
                          flush=True)
            time.sleep(a.interval)
        out = p.stdout.read().strip()
    stderr = open(err_path).read()
    if p.returncode != 0:
        sys.exit(f"soak: syspgo collect failed ({p.returncode}): {stderr[-2000:]}")
    if len(samples) < 2:
        sys.exit("soak: fewer than two RSS samples; use a longer --minutes or a shorter --interval")

    # The rows of the table: the first sample, the last one at or before
    # each whole minute, and the last one.
    rows = [samples[0]]
    for m in range(1, int(a.minutes) + 1):
        at = [s for s in samples if s[0] <= m * 60 + a.interval / 2]
        if at and at[-1] is not rows[-1]:
            rows.append(at[-1])
    if samples[-1] is not rows[-1]:
        rows.append(samples[-1])
    base = next((s[1] for s in samples if s[0] >= 60), samples[-1][1]) if a.minutes >= 2 else samples[0][1]
    peak = max(s[1] for s in samples if s[0] >= min(60, samples[-1][0]))
    allowed = max(8 * 1024, base // 10)
    flat = peak - base <= allowed

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        events, dropped = c.execute("SELECT events_recorded, events_dropped FROM run WHERE id = 1").fetchone()

    lines = [
        f"Load: {a.rate} pread+write pairs a second on a 64 KiB file and a `true` process every 0.2 s, "
        f"for {a.minutes:g} min, recorded with every probe group; VmRSS sampled every {a.interval:g} s "
        f"({len(samples)} samples). {events} events recorded, {dropped} dropped; the load made {out or '?'} "
        f"pread+write pairs.",
        "",
        "| time | collector VmRSS | database |",
        "|---:|---:|---:|",
    ]
    for t, r, s in rows:
        lines.append(f"| {t / 60:.1f} min | {r / 1024:.1f} MiB | {s / 2**20:.0f} MiB |")
    verdict = "flat" if flat else "NOT flat"
    lines += ["", f"**{verdict}**: peak {peak / 1024:.1f} MiB against {base / 1024:.1f} MiB "
                  f"{'at one minute' if a.minutes >= 2 else 'at the start'} "
                  f"(allowed rise {allowed / 1024:.1f} MiB: the larger of 8 MiB and 10 %)."]
    body = "\n".join(lines)
    B.write_section("Collector memory over a long run (soak)", f"sudo bench/soak.py --minutes {a.minutes:g}", body)
    print(body)
    if a.keep:
        print(f"soak: kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if flat else 1)


if __name__ == "__main__":
    main()
