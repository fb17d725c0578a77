#!/usr/bin/env python3
"""symbolize.py - symbolization and emission time for a run of over 1 M samples.

Records a CPU-bound program (built with -g -fdebug-info-for-profiling and
frame pointers) under `syspgo collect --probes cpu`, then grows the run to
--samples samples by repeating its rows with shifted times (the stacks are
the real ones; a long profile repeats its stacks the same way). Times
`syspgo optimize --emit sample-profile` and `syspgo analyze hot`, --runs
each, interleaved, and reads the share of samples symbolized to a source
line from the optimize summary. Writes its section of bench/RESULTS.md.

usage: sudo bench/symbolize.py [--runs 5] [--samples 1000000]
"""
import argparse
import os
import re
import sqlite3
import subprocess
import time

import benchlib as B


def timed(cmd):
    t0 = time.monotonic_ns()
    p = subprocess.run(cmd, capture_output=True, text=True)
    t1 = time.monotonic_ns()
    if p.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed: {p.stderr[-1500:]}")
    return t1 - t0, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--samples", type=int, default=1000000)
    a = ap.parse_args()
    work = B.work_dir("symbolize", a.runs)
    binary = os.path.join(work, "cpu_bound")
    subprocess.run(["clang-19", "-O2", "-g", "-fdebug-info-for-profiling", "-fno-omit-frame-pointer", "-o", binary,
                    os.path.join(B.ROOT, "bench", "workloads", "cpu_bound.c")], check=True)
    db = os.path.join(work, "run.db")
    subprocess.run([B.SYSPGO, "collect", "--probes", "cpu", "-o", db, "--", binary, "1500000000"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    con = sqlite3.connect(db)
    base = con.execute("SELECT COUNT(*) FROM cpu_sample WHERE run_id = 1").fetchone()[0]
    span = con.execute("SELECT MAX(ts) + 1 FROM cpu_sample WHERE run_id = 1").fetchone()[0]
    cols = "run_id, ts, pid, tid, cpu, kernel, ip, user_stack_id, kernel_stack_id"
    copies = (a.samples + base - 1) // base
    con.execute(f"""INSERT INTO cpu_sample ({cols})
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {copies - 1})
        SELECT run_id, ts + n.i * {span}, pid, tid, cpu, kernel, ip, user_stack_id, kernel_stack_id
        FROM cpu_sample CROSS JOIN n WHERE run_id = 1""")
    con.commit()
    total = con.execute("SELECT COUNT(*) FROM cpu_sample WHERE run_id = 1").fetchone()[0]
    con.close()
    opt, hot, line_share = [], [], ""
    for _ in range(a.runs):
        t, err = timed([B.SYSPGO, "optimize", db, "--binary", binary, "--emit", "sample-profile",
                        "-o", os.path.join(work, "out.prof")])
        opt.append(t)
        m = re.search(r"([0-9.]+)% of those at a source line", err)
        line_share = m.group(1) + "%" if m else "?"
        hot.append(timed([B.SYSPGO, "analyze", db, "hot", "--binary", binary])[0])
    body = (f"A real `syspgo collect --probes cpu` run of bench/workloads/cpu_bound.c ({base:,} samples) grown "
            f"to {total:,} samples by repeating its rows; {a.runs} interleaved runs, medians (min–max).\n\n"
            "| step | wall time |\n|---|---|\n"
            f"| `syspgo optimize --emit sample-profile` (symbolize + write) | {B.fmt_range(opt, 1e9, 's', 2)} |\n"
            f"| `syspgo analyze hot` (symbolize + aggregate) | {B.fmt_range(hot, 1e9, 's', 2)} |\n\n"
            f"Samples whose IP symbolized to a source line: {line_share}. Target (issue 5): under 10 s.\n")
    B.write_section("symbolize", f"sudo bench/symbolize.py --runs {a.runs} --samples {a.samples}", body)
    print(body)


if __name__ == "__main__":
    main()
