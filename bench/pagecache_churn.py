#!/usr/bin/env python3
"""pagecache_churn.py - the page-cache group in a real memory-cgroup thrash: events lost, cost, same answer.

Two scenarios of issue 23, each in a new v1 memory cgroup, after dropping
the page cache:
  --scenario thrash (story 3 at size): examples/pagecache_thrash/
    run_in_memcg.sh runs the program over a --mb MiB library, --passes
    times, under --limit-mb MiB; recorded with `--probes
    fileio,pagecache,faults,block`;
  --scenario mmap-clang: a 512 MiB file read 4 times through a mapping,
    then `clang-19 -c` three times, under 32 MiB (bench/workloads/
    in_memcg.sh); recorded with every default group. clang's own binary
    and libraries are held mapped by a process outside the cgroup for the
    whole bench, mapped and locked (PinnedFiles), so their pages are charged there: the churn
    is the 512 MiB file's and clang's data. Unpinned, libLLVM's 100 MiB of
    text cannot stay in 32 MiB and one clang thrashes for minutes (about
    11 min wall, 5 min system time here, without syspgo), a scenario no
    one would run twice.
Each is recorded three ways, interleaved, --runs times each:
  - lean: the defaults (`--detail lean`: counted in the kernel);
  - full: `--detail full` with the default ring buffers (every event a row);
  - full-64: `--detail full --ringbuf-mb 64`, the reference that loses least;
and with --baseline REV, lean as built at REV too. --load N runs N busy
loops beside the whole bench, as a build beside the work would be.
For each: page-cache events lost in the kernel (run_drop), the lean maps'
overflow (run_aggregate), the CPU of the collector's process tree (wait4:
the command's own work is in it, the same in every variant), the
collector's peak RSS (VmHWM) and the tree's largest process's, the database's size,
and whether `analyze pagecache --json` names the same top file with the
same reclaim as full-64's run of the same round. Writes its section of
bench/RESULTS.md.

usage: sudo bench/pagecache_churn.py [--runs 5] [--mb 128] [--limit-mb 16] [--passes 3]
       sudo bench/pagecache_churn.py --scenario mmap-clang [--runs 5] [--variants lean] [--load 2] [--baseline REV]
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import threading

import benchlib as B

VARIANTS = {
    "lean": [],
    "full": ["--detail", "full"],
    "full-64": ["--detail", "full", "--ringbuf-mb", "64"],
}


MMAP_READ = """
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
print(sum(m[p] for p in range(0, len(m), 4096)))
"""


PIN = """
import mmap, os, sys
maps = []
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    # MAP_LOCKED (0x2000): nothing reclaims them, DAMON's pageout included.
    m = mmap.mmap(fd, 0, flags=mmap.MAP_SHARED | 0x2000, prot=mmap.PROT_READ)
    sum(m[p] for p in range(0, len(m), 4096))
    maps.append(m)
print("ready", flush=True)
sys.stdin.read()
"""


class PinnedFiles:
    """Holds `paths` mapped, every page touched, from a process outside any
    bench cgroup while the block runs: mapped pages survive the page-cache
    drop of bench/workloads/in_memcg.sh and stay charged to this process's
    cgroup."""

    def __init__(self, paths):
        self.paths, self.proc = paths, None

    def __enter__(self):
        if self.paths:
            self.proc = subprocess.Popen([sys.executable, "-c", PIN] + self.paths, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True)
            if self.proc.stdout.readline().strip() != "ready":
                sys.exit(f"bench: could not map {' '.join(self.paths)} to hold them in the page cache")
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.stdin.close()
            self.proc.wait()


def clang_files():
    """clang-19's executable and the shared libraries it loads, resolved."""
    exe = os.path.realpath(subprocess.run(["sh", "-c", "command -v clang-19"], capture_output=True, text=True,
                                          check=True).stdout.strip())
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True, check=True).stdout
    libs = [line.split("=>")[1].split("(")[0].strip() for line in ldd.splitlines() if "=>" in line]
    return [exe] + sorted({os.path.realpath(p) for p in libs if p.startswith("/")})


def command(work, args, lib):
    """The scenario's command line and the collect options it is recorded with."""
    if args.scenario == "thrash":
        script = os.path.join(B.ROOT, "examples", "pagecache_thrash", "run_in_memcg.sh")
        prog = os.path.join(B.BUILD, "examples", "bin", "pagecache_thrash")
        return ["--probes", "fileio,pagecache,faults,block"], [
            script, "--bin", prog, "--file", lib, "--mb", str(args.mb), "--limit-mb", str(args.limit_mb),
            "--passes", str(args.passes)]
    big, src = os.path.join(work, "big.dat"), os.path.join(B.ROOT, "bench", "workloads", "cpu_bound.c")
    if not os.path.exists(big):
        subprocess.run(["head", "-c", str(512 << 20), "/dev/urandom"], stdout=open(big, "wb"), check=True)
    reads = "; ".join(["python3 -c \"$1\" \"$2\" > /dev/null"] * 4)
    clang = "; ".join(["clang-19 -O2 -c \"$3\" -o \"$4\""] * 3)
    inner = ["sh", "-c", reads + "; " + clang, "sh", MMAP_READ, big, src, os.path.join(work, "out.o")]
    return [], [os.path.join(B.ROOT, "bench", "workloads", "in_memcg.sh"), "32"] + inner


class HighWaterMark:
    """The collector's own peak RSS (VmHWM), read every 20 ms while it runs:
    wait4's ru_maxrss is the largest process of the tree, which in the
    mmap-clang scenario is clang with libLLVM mapped, not the collector.
    VmHWM never falls, so the last read is the peak but for the last 20 ms."""

    def __init__(self):
        self.pid, self.kib, self.done = 0, 0, threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)

    def start(self, pid):
        self.pid = pid
        self.thread.start()

    def poll(self):
        while not self.done.wait(0.02):
            self.kib = max(self.kib, B.status_kib(self.pid, "VmHWM") or 0)

    def stop(self):
        self.done.set()
        self.thread.join()

    @property
    def mib(self):
        return self.kib / 1024.0


def record(work, name, i, args, lib, syspgo=B.SYSPGO):
    db = os.path.join(work, f"{name.replace(' ', '-')}-{i}.db")
    probes, cmd = command(work, args, lib)
    argv = [syspgo, "collect", "-o", db] + probes + VARIANTS[name.split(" ")[0]] + ["--"] + cmd
    hwm = HighWaterMark()
    _, ru, _, _ = B.run_measured(argv, watch=hwm)
    con = sqlite3.connect(db)
    lost = con.execute("SELECT COALESCE(SUM(dropped), 0) FROM run_drop").fetchone()[0]
    lost_pc = con.execute("SELECT COALESCE(SUM(dropped), 0) FROM run_drop WHERE probe_group = 'pagecache'").fetchone()[0]
    lost_by = dict(con.execute("SELECT probe_group, SUM(dropped) FROM run_drop GROUP BY probe_group HAVING SUM(dropped) > 0"))
    overflow = con.execute("SELECT COALESCE(SUM(overflow), 0) FROM run_aggregate "
                           "WHERE probe_group = 'pagecache' AND map != 'pc_chunks.refaults'").fetchone()[0]
    kept = con.execute("SELECT SUM(events) FROM run_probe").fetchone()[0]
    con.close()
    out = subprocess.run([B.SYSPGO, "analyze", db, "pagecache", "--json"], capture_output=True, text=True, check=True)
    findings = json.loads(out.stdout)["findings"]
    top = findings[0]["detail"] if findings else {}
    return {
        "lost": lost, "lost_pc": lost_pc, "lost_by": lost_by, "overflow": overflow, "kept": kept,
        # wait4's usage covers the collector and the children it waited
        # for (the command): the same command in every variant.
        "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss / 1024.0, "hwm": hwm.mib,
        "db": sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s)) / 2**20,
        "top": (top.get("file", ""), top.get("reclaim", ""), top.get("churn_pages", 0)),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mb", type=int, default=128)
    ap.add_argument("--limit-mb", type=int, default=16)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--scenario", choices=["thrash", "mmap-clang"], default="thrash")
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="comma-separated, of " + ", ".join(VARIANTS) + " (default: all); the last column "
                    "needs full-64")
    ap.add_argument("--load", type=int, default=0, help="busy loops beside the bench (default: none)")
    ap.add_argument("--baseline", help="git revision whose build is recorded as 'lean at REV' too")
    args = ap.parse_args()
    variants = args.variants.split(",")
    if not variants or any(v not in VARIANTS for v in variants):
        ap.error(f"--variants takes names from {', '.join(VARIANTS)}, got '{args.variants}'")
    work = B.work_dir("pagecache-churn", args.runs)
    lib = os.path.join(work, "libthrash.so")
    binaries = {n: B.SYSPGO for n in variants}
    if args.baseline:
        rev = subprocess.run(["git", "-C", B.ROOT, "rev-parse", "--short", args.baseline], capture_output=True,
                             text=True, check=True).stdout.strip()
        binaries[f"lean at {rev}"] = B.build_baseline(rev, work)
    res = {n: [] for n in binaries}
    pinned = clang_files() if args.scenario == "mmap-clang" else []
    with B.BusyLoops(args.load), PinnedFiles(pinned):
        for i in range(args.runs):
            for name, syspgo in binaries.items():
                r = record(work, name, i, args, lib, syspgo)
                res[name].append(r)
                print(f"run {i + 1}/{args.runs} {name:8} lost {r['lost']:>9} {r['lost_by'] or ''} kept {r['kept']:>9} overflow {r['overflow']} "
                      f"cpu {r['cpu']:.2f} s collector {r['hwm']:.1f} MiB largest {r['rss']:.1f} MiB db {r['db']:.1f} MiB top {r['top']}", flush=True)
    rows = ["| variant | events lost (all groups) | of them pagecache | kept (ring buffers) | lean map overflow | tree CPU s | collector peak RSS MiB "
            "| largest process's peak RSS MiB | DB MiB | top finding as full-64's |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, rs in res.items():
        same = (f"{sum(1 for j, r in enumerate(rs) if r['top'][:2] == res['full-64'][j]['top'][:2] and r['top'][0])} "
                f"of {len(rs)}" if "full-64" in res else "not measured")
        def m(key, fmt):
            xs = [r[key] for r in rs]
            return f"{fmt.format(B.med(xs))} ({fmt.format(min(xs))}–{fmt.format(max(xs))})"
        rows.append(f"| {name} | {m('lost', '{:.0f}')} | {m('lost_pc', '{:.0f}')} | {m('kept', '{:.0f}')} | {m('overflow', '{:.0f}')} | "
                    f"{m('cpu', '{:.2f}')} | {m('hwm', '{:.1f}')} | {m('rss', '{:.1f}')} | {m('db', '{:.1f}')} | {same} |")
    churn = {n: B.med([r["top"][2] for r in rs]) for n, rs in res.items()}
    what = (f"Story 3 at size: a {args.mb} MiB library, {args.passes} passes, in a memory cgroup limited to "
            f"{args.limit_mb} MiB; `--probes fileio,pagecache,faults,block`" if args.scenario == "thrash" else
            "A 512 MiB file read 4 times through a mapping, then `clang-19 -O2 -c` three times, in a memory cgroup "
            "limited to 32 MiB; every default group. clang's executable and its "
            f"{len(pinned) - 1} libraries (libLLVM, libclang-cpp, ...) were held mapped and locked by a process outside the "
            "cgroup, so the churn is the file's and clang's data, not libLLVM's text thrashing for minutes")
    if args.load:
        what += f"; {args.load} busy loops ran beside the whole bench, as a build beside the work would"
    body = (what + f"; medians of {args.runs} interleaved rounds "
            "(min–max). CPU is the collector's process tree (the command's own work included), from wait4. *Collector "
            "peak RSS*: its VmHWM, read every 20 ms; *largest process's*: wait4's ru_maxrss, the largest process of the "
            "tree (clang, with libLLVM mapped, in the mmap-clang scenario).\n\n"
            + "\n".join(rows) + "\n\n"
            + "Median churn pages of the top finding: "
            + ", ".join(f"{n} {c:.0f}" for n, c in churn.items()) + ".\n")
    extra = ("" if args.variants == ",".join(VARIANTS) else f" --variants {args.variants}") + \
        (f" --load {args.load}" if args.load else "") + (f" --baseline {args.baseline}" if args.baseline else "")
    if args.scenario == "thrash":
        cmd = (f"sudo bench/pagecache_churn.py --runs {args.runs} --mb {args.mb} --limit-mb {args.limit_mb} "
               f"--passes {args.passes}")
        B.write_section("pagecache_churn" + (" (busy machine)" if args.load else ""), cmd + extra, body)
    else:
        B.write_section("pagecache_churn (mmap and clang" + (", busy machine)" if args.load else ")"),
                        f"sudo bench/pagecache_churn.py --scenario mmap-clang --runs {args.runs}" + extra, body)
    print(body)


if __name__ == "__main__":
    main()
