#!/usr/bin/env python3
"""startup_order.py - a program relinked with its start's functions together: pages, extents, cold start.

Issue 25's layout inside binaries: `syspgo optimize --emit startup-order
--binary BIN` orders the functions of the text pages a cold run first
touched, for `ld.lld --symbol-ordering-file`. This bench takes SQLite's
shell (`apt-get source sqlite3`, the amalgamation, built as bench/pgo.py
builds it: clang-19 -O2 -ffunction-sections, lld) and a short cold start
(a small SQL script, bench/workloads/sql_eval.sql at a small scale):
  1. base: the plain build; one cold run recorded with `collect --cold
     --no-readahead` gives its plan and the startup order;
  2. ordered: the same build linked with that order; its own cold run
     recorded the same way gives its plan.
From each plan, the binary's pages and extents (the start's text and data
pages of the executable, and how many runs of the file they make). Then,
interleaved, the page cache dropped before each: each build cold with the
disk's readahead window as it is, cold with a 128 KiB window (the
kernel's default, which most disks have; this bench's disk has more),
and with its plan (`syspgo-prefetch PLAN -- CMD`). Wall time and the bytes
the process tree read (ru_inblock). Writes its section of bench/RESULTS.md.

usage: sudo bench/startup_order.py [--runs 9]
"""
import argparse
import os
import subprocess
import sys

import benchlib as B
import coldstart as C
import pgo as P

SCALE = 100  # the SQL script's scale: a start and a little work
SMALL_WINDOW_KB = 128


def binary_pages(shown, binary):
    """(pages, extents) of `binary` in a plan as plan-show --json gives it."""
    real = os.path.realpath(binary)
    for f in shown["files"]:
        if os.path.realpath(f["path"]) == real:
            return sum(e["length"] for e in f["extents"]) // 4096, len(f["extents"])
    return 0, 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    work = B.work_dir("startup-order", a.runs)
    srcroot = os.path.join(work, "src")
    os.makedirs(srcroot, exist_ok=True)
    P.fetch_sources(srcroot, {"sqlite3": "sqlite3-3*"})
    prog = P.Sqlite("sqlite", work)
    prog.fetch(srcroot)
    script = prog.instantiate("sql_eval.sql", SCALE)

    def cmd(binary):
        return [binary, ":memory:", ".read " + script]

    costs = {}  # variant_build times its steps; this bench does not report them
    base = P.variant_build(prog, "base", [], costs)
    shown, plans = {}, {}
    plans["base"] = os.path.join(work, "base.plan")
    shown["base"] = C.plan_of(os.path.join(work, "base.db"), plans["base"], cmd(base))
    order = os.path.join(work, "sqlite3.order")
    o = subprocess.run([B.SYSPGO, "optimize", os.path.join(work, "base.db"), "--emit", "startup-order", "--binary", base,
                        "-o", order], capture_output=True, text=True)
    if o.returncode != 0:
        sys.exit("bench: optimize --emit startup-order failed: " + o.stderr[-1500:])
    symbols = sum(1 for _ in open(order))
    ordered = P.variant_build(prog, "ordered", ["-Wl,--symbol-ordering-file=" + order], costs)
    plans["ordered"] = os.path.join(work, "ordered.plan")
    shown["ordered"] = C.plan_of(os.path.join(work, "ordered.db"), plans["ordered"], cmd(ordered))
    binaries = {"base": base, "ordered": ordered}

    sysfs = f"/sys/block/{C.disk_of(base)}/queue/read_ahead_kb"
    disk_kb = int(open(sysfs).read())
    modes = ["cold", "cold, small window", "plan"]
    wall = {(b, m): [] for b in binaries for m in modes}
    read = {(b, m): [] for b in binaries for m in modes}
    for i in range(a.runs):
        order_of_round = [(b, m) for m in modes for b in binaries]
        for b, m in (order_of_round if i % 2 == 0 else order_of_round[::-1]):
            argv = cmd(binaries[b])
            if m == "plan":
                argv = [B.SYSPGO_PREFETCH, plans[b], "--"] + argv
            old = C.set_readahead_kb({sysfs: SMALL_WINDOW_KB}) if m == "cold, small window" else None
            try:
                B.drop_caches()
                w, r = C.run_tree_read(work, argv)
            finally:
                if old:
                    C.set_readahead_kb(old)
            wall[(b, m)].append(w)
            read[(b, m)].append(r)
        print(f"round {i + 1}/{a.runs}", flush=True)

    rows = []
    for b in binaries:
        pages, extents = binary_pages(shown[b], binaries[b])
        size = os.path.getsize(binaries[b]) / 2**20
        cells = [b, f"{size:.1f} MiB", str(pages), str(extents)]
        for m in modes:
            cells += [B.fmt_range(wall[(b, m)]), f"{B.med(read[(b, m)]) / 2**20:.2f}"]
        rows.append(cells)
    med = {k: B.med(v) for k, v in wall.items()}
    mib = {k: B.med(v) / 2**20 for k, v in read.items()}

    def versus(m):
        """base's time over ordered's, and the MiB each read, in mode m."""
        return f"{med[('base', m)] / med[('ordered', m)]:.2f}x, {mib[('base', m)]:.2f} → {mib[('ordered', m)]:.2f} MiB"

    bp, be = binary_pages(shown["base"], base)
    op, oe = binary_pages(shown["ordered"], ordered)
    summary = (f"Ordered against base: the executable's start in {oe} extents instead of {be} ({op} pages against "
               f"{bp}); cold {versus('cold')}; with a {SMALL_WINDOW_KB} KiB window {versus('cold, small window')}; "
               f"with the plan {versus('plan')}.\n")
    body = (
        f"SQLite's shell (`apt-get source sqlite3`, the amalgamation; clang-19 -O2 with bench/pgo.py's flags: "
        f"`-ffunction-sections`, lld) running bench/workloads/sql_eval.sql at scale {SCALE} in `:memory:`. *ordered*: "
        f"the same build linked with `-Wl,--symbol-ordering-file` from `syspgo optimize base.db --emit startup-order "
        f"--binary sqlite3` ({symbols} symbols), base.db a cold run of *base* recorded with `collect --cold "
        f"--no-readahead`. *pages* and *extents*: the executable's pages in the plan of a cold run of that build and "
        f"how many runs of the file they make. Wall time, medians of {a.runs} interleaved rounds (min–max), the page "
        f"cache dropped before each; *MiB read*: what the process tree read from disk (ru_inblock, medians). *cold*: "
        f"this disk's readahead window ({disk_kb} KiB); *cold, small window*: {SMALL_WINDOW_KB} KiB, the kernel's "
        f"default, set for the run; *plan*: `syspgo-prefetch PLAN -- CMD` with the build's own plan.\n\n"
        "| build | size | pages | extents | cold | MiB read | cold, small window | MiB read | plan | MiB read |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n" + C.table_rows(rows) + "\n\n"
        + summary)
    B.write_section("startup_order", f"sudo bench/startup_order.py --runs {a.runs}", body)
    print(body)


if __name__ == "__main__":
    main()
