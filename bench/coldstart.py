#!/usr/bin/env python3
"""coldstart.py - cold start with and without a syspgo prefetch plan.

For each program: one cold collection with readahead off (`syspgo collect
--cold --no-readahead`) makes a plan of the pages it used (`syspgo optimize
--emit plan`). Then, interleaved, --runs rounds of:
  cold       drop the page cache, run the program;
  whole      drop the page cache, read every file of the plan whole (what cat
             or vmtouch -t does), then run the program;
  plan       drop the page cache, `syspgo-prefetch PLAN -- program` (the
             static replayer; the program starts once the first 16 MiB of the
             plan are queued, and the replay runs ahead of it);
  bare       the plan run without the replayer's lookups and in the
             caller's I/O class (`--no-lookups --io-priority inherit`): what
             the replay did before it resolved the run's paths first and
             let the program's own reads pass its queue;
  syspgo     the same with `syspgo prefetch` (the full binary, whose own cold
             start reads about 20 MiB);
  warm       run the program again with a warm cache;
  floor      no program: read as many bytes as the plan holds from a scratch
             file, sequentially, with O_DIRECT, 1 MiB requests, 8 in flight:
             the fastest this disk delivers those bytes, whatever their
             order. No replay of the plan can finish sooner.
Wall time covers prefetching plus the program. Bytes read from disk come from
/proc/diskstats of the disk holding the files. After the timed rounds, the
plan and bare replays run 3 more times each with the program under
/usr/bin/time, whose count of major page faults is how often the program
still started a read of its own (a deterministic count beside the noisy
wall times). Writes its section of bench/RESULTS.md.

usage: sudo bench/coldstart.py [--runs 10]
"""
import argparse
import json
import mmap
import os
import subprocess
import threading
import time

import benchlib as B


def disk_sectors_read(dev):
    for line in open("/proc/diskstats"):
        f = line.split()
        if f[2] == dev:
            return int(f[5])
    raise SystemExit(f"bench: no disk {dev} in /proc/diskstats")


def disk_of(path):
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{major}:{minor}"))
    parent = os.path.basename(os.path.dirname(os.path.realpath(f"/sys/dev/block/{major}:{minor}")))
    return parent if os.path.exists(f"/sys/block/{parent}") else name



def run_variant(cmd):
    t0 = time.monotonic_ns()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t1 = time.monotonic_ns()
    if p.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed: {p.stderr[-1500:]}")
    return t1 - t0


FLOOR_REQUEST = 1 << 20
FLOOR_DEPTH = 8


def floor_read(path, nbytes):
    """Reads the first nbytes of path with O_DIRECT, FLOOR_DEPTH requests
    of FLOOR_REQUEST bytes in flight; returns the wall time in ns."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    offsets = list(range(0, nbytes, FLOOR_REQUEST))
    lock = threading.Lock()

    def work():
        buf = mmap.mmap(-1, FLOOR_REQUEST)  # page-aligned, as O_DIRECT needs
        while True:
            with lock:
                if not offsets:
                    return
                off = offsets.pop(0)
            os.preadv(fd, [buf], off)
    threads = [threading.Thread(target=work) for _ in range(FLOOR_DEPTH)]
    t0 = time.monotonic_ns()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t1 = time.monotonic_ns()
    os.close(fd)
    return t1 - t0


# Major page faults of the program during a replay from a cold cache: the
# faults that had to start a read (a page the plan had not queued); waiting
# for a page the replay is reading is a minor fault. Tracing the replay
# instead would not do: the collector's own libraries (libc, libstdc++)
# stay cached through the drop, so the program would find them there.
def major_faults(work, replay, cmd):
    out = os.path.join(work, "time.out")
    B.drop_caches()
    subprocess.run(replay + ["--", "/usr/bin/time", "-f", "%F", "-o", out] + cmd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return int(open(out).read().split()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args()
    work = B.work_dir("coldstart", a.runs)
    small = os.path.join(work, "small.c")
    open(small, "w").write("int add(int a, int b) { return a + b; }\n")
    example = os.path.join(B.BUILD, "examples", "bin", "cold_start")
    subprocess.run([example, work, "--make"], check=True, stdout=subprocess.DEVNULL)
    programs = [
        ("examples/cold_start (story 2)", [example, work]),
        ("clang-19 --version", ["clang-19", "--version"]),
        ("clang-19 -c small.c", ["clang-19", "-c", small, "-o", os.path.join(work, "small.o")]),
        ("python3 -c 'import numpy'", ["/usr/bin/python3", "-c", "import numpy"]),
    ]
    disk = disk_of("/usr/lib")
    scratch = os.path.join(work, "floor.bin")  # on the same disk as /usr/lib (checked below)
    subprocess.run(["dd", "if=/dev/urandom", f"of={scratch}", "bs=1M", "count=512", "status=none", "conv=fsync"],
                   check=True)
    if disk_of(scratch) != disk:
        raise SystemExit(f"bench: {work} is not on {disk}, the disk of /usr/lib; the floor would measure another disk")
    rows, verdicts = [], []
    for title, cmd in programs:
        db, plan = os.path.join(work, "cold.db"), os.path.join(work, "app.plan")
        for f in (db, plan):
            if os.path.exists(f):
                os.unlink(f)
        subprocess.run([B.SYSPGO, "collect", "--cold", "--no-readahead", "--probes", "fileio,faults,pagecache", "-o", db, "--"] + cmd,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([B.SYSPGO, "optimize", db, "--emit", "plan", "-o", plan], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shown = json.loads(subprocess.run([B.SYSPGO, "plan-show", plan, "--json"], check=True, capture_output=True,
                                          text=True).stdout)
        paths = [f["path"] for f in shown["files"]]
        plan_bytes = sum(e["length"] for f in shown["files"] for e in f["extents"])
        variants = {
            "cold": cmd,
            "whole": ["sh", "-c", "cat " + " ".join(f"'{p}'" for p in paths) + " > /dev/null; exec \"$@\"",
                      "sh"] + cmd,
            "plan": [B.SYSPGO_PREFETCH, plan, "--"] + cmd,
            "bare": [B.SYSPGO_PREFETCH, plan, "--no-lookups", "--io-priority", "inherit", "--"] + cmd,
            "syspgo": [B.SYSPGO, "prefetch", plan, "--"] + cmd,
            "warm": cmd,
        }
        wall = {v: [] for v in list(variants) + ["floor"]}
        read = {v: [] for v in variants}
        for i in range(a.runs):
            for v in ["cold", "whole", "plan", "bare", "syspgo", "warm", "floor"]:
                if v == "floor":
                    wall[v].append(floor_read(scratch, (plan_bytes + 4095) // 4096 * 4096))
                    continue
                if v != "warm":
                    B.drop_caches()
                else:
                    run_variant(cmd)  # make sure it is warm
                s0 = disk_sectors_read(disk)
                wall[v].append(run_variant(variants[v]))
                read[v].append((disk_sectors_read(disk) - s0) * 512)
        # The replayer's part of each variant, up to its "--".
        replay = lambda v: variants[v][:variants[v].index("--")]
        own_text = " / ".join(f"{B.med([major_faults(work, replay(v), cmd) for _ in range(3)]):.0f}"
                              for v in ["plan", "bare"])
        med = {v: B.med(wall[v]) for v in wall}
        rows.append([title] + [B.fmt_range(wall[v]) for v in ["cold", "whole", "plan", "bare", "syspgo", "warm", "floor"]] +
                    [f"{med['plan'] / med['warm']:.1f}x", f"{med['whole'] / med['plan']:.2f}x",
                     f"{med['cold'] / med['plan']:.2f}x", f"{med['bare'] / med['plan']:.2f}x",
                     f"{len(shown.get('lookups', []))}", own_text,
                     " / ".join(f"{B.med(read[v]) / 1048576:.0f}" for v in ["cold", "whole", "plan"]),
                     f"{plan_bytes / 1048576:.0f} MiB, {len(paths)} files"])
        ms = lambda ns: f"{ns / 1e6:.0f} ms"
        # No replay beats the disk (floor), and no program beats its own warm run.
        bound = max(med["floor"], med["warm"])
        reach = lambda goal: "reachable on this disk" if bound <= goal else \
            f"**unreachable here**: {'the floor' if med['floor'] >= med['warm'] else 'the warm run'} ({ms(bound)}) is above it"
        cold_read = B.med(read["cold"])
        verdicts.append(
            f"- {title}: within 2x of warm ({ms(2 * med['warm'])}): {'met' if med['plan'] <= 2 * med['warm'] else 'not met'}, "
            f"{reach(2 * med['warm'])}; 2x faster than whole-file ({ms(med['whole'] / 2)}): "
            f"{'met' if 2 * med['plan'] <= med['whole'] else 'not met'}, {reach(med['whole'] / 2)}; "
            f"4x faster than cold ({ms(med['cold'] / 4)}): {'met' if 4 * med['plan'] <= med['cold'] else 'not met'}, "
            f"{reach(med['cold'] / 4)}; bytes within cold + 10%: "
            f"{'met' if B.med(read['plan']) <= 1.1 * cold_read else 'not met'}")
    body = (f"Wall time of prefetch + program, medians of {a.runs} interleaved rounds (min–max); the page cache is "
            "dropped before every cold, whole and plan run.\n\n"
            "| program | cold | whole-file prefetch | plan (syspgo-prefetch) | plan, bare | plan (syspgo prefetch) | "
            "warm | floor (plan's bytes, sequential O_DIRECT) | "
            "plan ÷ warm | whole ÷ plan | cold ÷ plan | bare ÷ plan | lookups | program's major faults: plan / bare | "
            "MiB read from disk: cold / whole / plan | plan size |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" +
            "\n".join("| " + " | ".join(r) + " |" for r in rows) +
            f"\n\n*floor*: no program runs; as many bytes as the plan holds are read from one scratch file on the same "
            f"disk, in order, with O_DIRECT, {FLOOR_REQUEST >> 20} MiB requests, {FLOOR_DEPTH} in flight. It is the "
            "least time this disk takes to deliver those bytes in any order, so a target below it, or below the warm "
            "run, cannot be met by any replay of this plan.\n\n"
            "*plan, bare*: the same replay with `--no-lookups --io-priority inherit`: no path is looked up first and "
            "the reads are in the program's I/O class, so its own reads wait behind the queued plan (the replayer "
            "before both). *lookups*: paths the plan resolves first. *program's major faults*: page faults in "
            "which the program had to start a read itself during a replay (a page the plan did not hold; waiting for "
            "one the replay is reading is a minor fault), from `/usr/bin/time -f %F`; medians of 3 replays.\n\n"
            "Targets (issue 7): plan within 2x of warm, at least 2x faster than whole-file prefetch, at least 4x "
            "faster than cold, reading no more than cold + 10%. Plan = the syspgo-prefetch column.\n\n" +
            "\n".join(verdicts) + "\n")
    B.write_section("coldstart", f"sudo bench/coldstart.py --runs {a.runs}", body)
    print(body)


if __name__ == "__main__":
    main()
