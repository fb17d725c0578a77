#!/usr/bin/env python3
"""collect_memory.py - peak memory of `syspgo collect` in event floods, against an earlier build.

A flood is four `dd if=/dev/zero of=/dev/null bs=1 count=N` at once (two
syscalls a byte, far more events than can be recorded), at N = 1/2, 1 and 2
times --count; a burst is one such dd of --burst bytes, which a collector
should take without losing events. Each is recorded with every default
probe group and default settings, by syspgo as built at --baseline (from
`git archive`, the same build type) and as built from this tree,
interleaved, --runs times: the collector's peak RSS (getrusage ru_maxrss;
its children, sh and dd, are far smaller), the events kept and lost, and
the memory budget the build printed, if it prints one. Writes its section
of bench/RESULTS.md.

usage: sudo bench/collect_memory.py [--runs 5] [--count 800000] [--burst 1000000] [--baseline main]
"""
import argparse
import os
import re
import subprocess
import sys

import benchlib as B


def flood(count):
    dd = f"dd if=/dev/zero of=/dev/null bs=1 count={count} 2>/dev/null & "
    return ["sh", "-c", dd * 4 + "wait"]


def burst(count):
    return ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", f"count={count}", "status=none"]


def collect(binary, db, argv):
    """Records argv; returns (peak RSS KiB, events kept, events lost, printed budget MiB or None)."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    _, ru, _, text = B.run_measured([binary, "collect", "-o", db, "--"] + argv)
    kept = re.search(r"recorded into\s+\S+:\s+(\d+)\s+events", text)
    lost = re.search(r"(\d+) events were LOST", text)
    budget = re.search(r"memory budget ([0-9.]+) MiB", text)
    return (ru.ru_maxrss, int(kept.group(1)) if kept else 0, int(lost.group(1)) if lost else 0,
            float(budget.group(1)) if budget else None)


def mib(kib):
    return kib / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--count", type=int, default=800000, help="bytes each of the flood's four dd's copies at 1x")
    ap.add_argument("--burst", type=int, default=1000000, help="bytes the burst's single dd copies")
    ap.add_argument("--baseline", default="main", help="git revision to compare with (default: main)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: syspgo collect needs root (CAP_BPF + CAP_PERFMON); run with sudo")
    work = B.work_dir("collect-memory", a.runs)
    rev = subprocess.run(["git", "-C", B.ROOT, "rev-parse", "--short", a.baseline], capture_output=True, text=True,
                         check=True).stdout.strip()
    variants = [(f"at {rev}", B.build_baseline(rev, work)), ("this tree", B.SYSPGO)]
    workloads = [(f"flood 1/2x (4 dd × {a.count // 2:,} B)", flood(a.count // 2)),
                 (f"flood 1x (4 dd × {a.count:,} B)", flood(a.count)),
                 (f"flood 2x (4 dd × {2 * a.count:,} B)", flood(2 * a.count)),
                 (f"burst (1 dd × {a.burst:,} B)", burst(a.burst))]
    res = {(w, v): [] for w, _ in workloads for v, _ in variants}
    for r in range(a.runs):
        print(f"bench: round {r + 1} of {a.runs}", file=sys.stderr)
        for w, argv in workloads:
            for v, binary in (variants if r % 2 == 0 else variants[::-1]):
                res[(w, v)].append(collect(binary, os.path.join(work, "run.db"), argv))

    def col(w, v, i):
        return [x[i] for x in res[(w, v)]]

    rows = []
    for w, _ in workloads:
        for v, _ in variants:
            rss, kept, lost = col(w, v, 0), col(w, v, 1), col(w, v, 2)
            budgets = {b for b in col(w, v, 3) if b is not None}
            rows.append(f"| {w} | {v} | {B.fmt_range(rss, 1024, 'MiB')} | {B.med(kept):,.0f} | "
                        f"{B.med(lost):,.0f} ({min(lost):,}–{max(lost):,}) | "
                        f"{', '.join(f'{b:g} MiB' for b in sorted(budgets)) or '—'} |")
    spread = []
    for v, _ in variants:
        peaks = [B.med(col(w, v, 0)) for w, _ in workloads[:3]]
        spread.append(f"{v}: {mib(max(peaks) - min(peaks)):.1f} MiB")
    body = (f"Each workload recorded with every default probe group and default settings, by syspgo as built at "
            f"`{rev}` and as built from this tree, interleaved, {a.runs} runs each: the collector's peak RSS "
            "(getrusage ru_maxrss), medians (min–max), the events kept and lost (medians, lost min–max), and the "
            "memory budget the build printed at the start.\n\n"
            "| workload | syspgo | collector peak RSS | events kept | events lost | printed budget |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(rows) +
            "\n\nPeak RSS from the smallest to the largest flood (median against median): " + "; ".join(spread) + ".\n")
    B.write_section("collect_memory: peak RSS in event floods",
                    f"sudo bench/collect_memory.py --runs {a.runs} --count {a.count} --burst {a.burst} "
                    f"--baseline {a.baseline}", body)
    print(body)


if __name__ == "__main__":
    main()
