#!/usr/bin/env python3
"""collect_start.py - what `syspgo collect -- true` costs, beside `perf record`.

A collector people run routinely must start cheaply: most of a short
command's recording is setting up. `true` is recorded by `syspgo collect`
with every default probe group, by `syspgo collect --probes G` for each
group G alone (which group costs what), and by `perf record -g -F 999
--no-bpf-event -- true` (perf's BPF-event thread adds about a second at
exit otherwise), interleaved, --runs rounds. For each: the recorder's CPU
(user + system of it and its children, from wait4; `true` itself costs
nothing measurable) and peak RSS (ru_maxrss: the largest process of the
tree, which is the recorder). The figure the kernel's verifier takes to
check each group's programs is inside the system time. The kernel symbols
come from syspgo's per-boot cache (collect/kallsyms.h) in every syspgo row
but one, which removes the cache first: what the first recording after a
boot or a module load pays. Writes its section of bench/RESULTS.md.

usage: sudo bench/collect_start.py [--runs 7]
"""
import argparse
import os

import benchlib as B

KALLSYMS_CACHE = "/run/syspgo/kallsyms"  # KernelSymbols::kCacheDir
GROUPS = ["fileio", "faults", "pagecache", "block", "irq", "sched", "cpu"]


def run(argv, cwd):
    _, ru, _, _ = B.run_measured(argv, cwd=cwd)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    B.require("perf", "linux-perf", "the comparison")
    work = B.work_dir("collect-start", a.runs)
    db = os.path.join(work, "t.db")
    every = [B.SYSPGO, "collect", "-o", db, "--", "true"]
    first = "syspgo collect (every default group), no kallsyms cache"
    variants = {"syspgo collect (every default group)": every, first: every}
    for g in GROUPS:
        variants[f"syspgo collect --probes {g}"] = [B.SYSPGO, "collect", "-o", db, "--probes", g, "--", "true"]
    variants["perf record -g -F 999 --no-bpf-event"] = ["perf", "record", "-q", "-g", "-F", "999", "--no-bpf-event",
                                                        "-o", os.path.join(work, "perf.data"), "--", "true"]
    res = {k: [] for k in variants}
    for i in range(a.runs):
        for name, argv in variants.items():
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.unlink(db + suffix)
            if name == first and os.path.exists(KALLSYMS_CACHE):
                os.unlink(KALLSYMS_CACHE)
            res[name].append(run(argv, work))
        print(f"round {i + 1}/{a.runs}: " + ", ".join(f"{n.split()[-1]} {r[-1][0]:.2f} s" for n, r in res.items()),
              flush=True)
    rows = ["| recorder | CPU s (user + sys) | peak RSS MiB |", "|---|---:|---:|"]
    for name, rs in res.items():
        cpu, rss = [r[0] for r in rs], [r[1] for r in rs]
        rows.append(f"| {name} | {B.med(cpu):.3f} ({min(cpu):.3f}–{max(cpu):.3f}) | "
                    f"{B.med(rss):.1f} ({min(rss):.1f}–{max(rss):.1f}) |")
    every_rs = res["syspgo collect (every default group)"]
    cpu, rss = B.med([r[0] for r in every_rs]), B.med([r[1] for r in every_rs])
    verdict = (f"Target (issue 23): every default group ≤ 0.3 s CPU and ≤ 64 MiB: "
               f"{'met' if cpu <= 0.3 and rss <= 64 else 'not met'} ({cpu:.3f} s, {rss:.1f} MiB).")
    body = (f"Recording `true`: medians of {a.runs} interleaved rounds (min–max). Proc, the group every "
            "collection loads, is in every syspgo row.\n\n" + "\n".join(rows) + "\n\n" + verdict + "\n\n"
            "Where the rest goes (`perf record -g` of one collect): mostly the kernel's verifier checking "
            "the groups' programs (on this kernel it searches the whole kernel BTF by name for every "
            "pointer a program loads from a trusted pointer, `btf_nested_type_is_trusted`), then attaching "
            "them. libbpf reads the kernel's BTF and searches it for CO-RE candidates once: the groups' "
            "objects are linked into one (bpf/CMakeLists.txt).\n")
    B.write_section("collect_start: recording `true`", f"sudo bench/collect_start.py --runs {a.runs}", body)
    print(body)


if __name__ == "__main__":
    main()
