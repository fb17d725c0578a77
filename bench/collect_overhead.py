#!/usr/bin/env python3
"""collect_overhead.py - recording throughput and overhead of `syspgo collect`.

Syscall-heavy workloads (dd with tiny blocks to /dev/null and to a file),
each run plain and under `syspgo collect` (default probe groups),
interleaved, --runs times each. Reports the command's wall time in both
variants, the events recorded and dropped, events per second of the
command's life, the collector's ingest rate into SQLite, and the time added
per event. Writes its section of bench/RESULTS.md.

usage: sudo bench/collect_overhead.py [--runs 7] [--count 500000]
"""
import argparse
import os
import sqlite3

import benchlib as B


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--count", type=int, default=500000, help="dd blocks per run")
    ap.add_argument("--probes", default=None, help="--probes for syspgo collect (default: all groups)")
    a = ap.parse_args()
    work = B.work_dir("bench", a.runs)
    timeit = B.build_timeit(work)
    target = os.path.join(work, "out.bin")
    workloads = {
        "dd bs=1 to /dev/null": ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", f"count={a.count}", "status=none"],
        "dd bs=512 to a file": ["dd", "if=/dev/zero", f"of={target}", "bs=512", f"count={a.count}", "status=none"],
    }
    rows = []
    for name, cmd in workloads.items():
        plain, coll, events, drops, ingest, cpu = [], [], [], [], [], []
        for i in range(a.runs):
            # Interleaved: plain, then collected, in every round.
            plain.append(B.timed(timeit, cmd, work)[0])
            db = os.path.join(work, f"run{i}.db")
            prefix = [B.SYSPGO, "collect", "-o", db] + (["--probes", a.probes] if a.probes else []) + ["--"]
            wall, _, _, outer, outer_cpu = B.timed(timeit, cmd, work, prefix=prefix)
            coll.append(wall)
            con = sqlite3.connect(db)
            ev, dr, start = con.execute("SELECT events_recorded, events_dropped, command_start_ts FROM run").fetchone()
            con.close()
            os.unlink(db)
            events.append(ev)
            drops.append(dr)
            # From release of the command to the last row committed.
            ingest.append(ev / ((outer - start) / 1e9))
            cpu.append(outer_cpu / ev)
        ev = B.med(events)
        added = (B.med(coll) - B.med(plain)) / ev / 1000  # ns -> µs
        rows.append((name, B.fmt_range(plain), B.fmt_range(coll), f"{ev:,.0f}", f"{max(drops)}",
                     f"{ev / (B.med(coll) / 1e9):,.0f}", f"{B.med(ingest):,.0f}", f"{added:.2f} µs",
                     f"{B.med(cpu) / 1000:.2f} µs"))
    body = ("Workload run plain and under `syspgo collect` (default probe groups), interleaved, "
            f"{a.runs} runs each; medians (min–max).\n\n"
            "| workload | plain | collected | events/run | dropped (max) | events/s (command) | events/s into SQLite | added per event | CPU per event (command + collector) |\n"
            "|---|---|---|---|---|---|---|---|---|\n" +
            "\n".join("| " + " | ".join(r) + " |" for r in rows) +
            "\n\n- *events/s into SQLite*: events ÷ time from the command's release to the collector's exit "
            "(every row committed).\n- *added per event*: (collected − plain median wall) ÷ events.\n")
    B.write_section("collect_overhead", f"sudo bench/collect_overhead.py --runs {a.runs} --count {a.count}"
                    + (f" --probes {a.probes}" if a.probes else ""), body)
    print(body)


if __name__ == "__main__":
    main()
