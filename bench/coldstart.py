#!/usr/bin/env python3
"""coldstart.py - cold start with and without a syspgo prefetch plan.

For each program: one cold collection with readahead off (`syspgo collect
--cold --no-readahead`) makes a plan of the pages it used (`syspgo optimize
--emit plan`). Then, interleaved, --runs rounds of:
  cold       drop the page cache, run the program;
  whole      drop the page cache, read every file of the plan whole (what cat
             or vmtouch -t does), then run the program;
  plan       drop the page cache, `syspgo-prefetch PLAN -- program` (the
             static replayer; the program starts once the plan's first read
             is queued, and the replay runs ahead of it);
  lead16     the plan run with `--lead 16` (the program starts once 16 MiB
             of the plan are queued, the lookups before them resolved);
  bare       the plan run without the replayer's lookups and in the
             caller's I/O class (`--no-lookups --io-priority inherit`): what
             the replay did before it resolved the run's paths first and
             let the program's own reads pass its queue;
  syspgo     the same with `syspgo prefetch` (the full binary, whose own cold
             start reads about 20 MiB);
  warm       run the program again with a warm cache;
  extents    no program: read the plan's own extents from the program's
             files with O_DIRECT (1 MiB requests at most, 32 in flight), in
             replay order: about the least time this disk takes to deliver
             them where they lie, so no replay of the plan finishes sooner;
  contiguous no program: read as many bytes as the plan holds from one
             scratch file, sequentially, the same way: what the same bytes
             would cost stored in one run on this disk, whatever their order;
  start      no program: `syspgo-prefetch --help` after a cache drop, the
             replayer's own cold start, which every replay pays before its
             first read and before the program can start.
Wall time covers prefetching plus the program. Bytes read from disk come from
/proc/diskstats of the disk holding the files. After the timed rounds, the
plan and bare replays run 5 more times each with the program under
/usr/bin/time, whose counts of the KiB the program read itself and of its
major page faults show what it did not find in the cache or on its way
there (pages the plan missed, or reached before the replay queued them).
Last, the plan is warmed ahead of time, AHEAD_RUNS times with --hold and
as many without, interleaved: the replay alone, then AHEAD_WAIT seconds,
then the program, counting whether it read from disk itself (what DAMON's
proactive reclaim, where it runs, took back meanwhile). Writes its section
of bench/RESULTS.md.

usage: sudo bench/coldstart.py [--runs 10]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
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


FLOOR_REQUEST = 1 << 20  # floorread.c's most
# Requests in flight. Of 16, 32 and 64 (5 cold reads each, twice), 32 read
# the story-2 and clang plans' extents soonest or within noise of it; 8
# left the disk idle between small extents, 128 was slower again.
FLOOR_DEPTH = 32


def floor_read(floorread, requests):
    """Reads requests [(path, offset, length)] with O_DIRECT through
    bench/floorread.c, FLOOR_DEPTH in flight, taken in list order; returns
    the wall time of the reads in ns."""
    listing = "".join(f"{path}\t{off}\t{n}\n" for path, off, n in requests)
    out = subprocess.run([floorread, str(FLOOR_DEPTH)], input=listing, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"bench: floorread failed: {out.stderr.strip()}")
    return int(out.stdout)


def sequential_requests(path, nbytes):
    """nbytes from the start of path, in FLOOR_REQUEST pieces."""
    return [(path, off, min(FLOOR_REQUEST, nbytes - off)) for off in range(0, nbytes, FLOOR_REQUEST)]


def extent_requests(shown):
    """The plan's own extents (plan-show --json), in replay order (first
    touch, as the replayer takes them), in FLOOR_REQUEST pieces."""
    steps = sorted(((e["first_touch_ns"], i, f["path"], e["offset"], e["length"])
                    for i, f in enumerate(shown["files"]) for e in f["extents"]), key=lambda s: (s[0], s[1]))
    return [(path, off + k, min(FLOOR_REQUEST, length - k))
            for _, _, path, off, length in steps for k in range(0, length, FLOOR_REQUEST)]


# What the program read itself during a replay from a cold cache, from its
# rusage: the KiB of block reads it started (ru_inblock, 512-byte units),
# readahead included, and its major page faults. It reads a page itself
# when the plan missed it, or when it got there before the replay had
# queued it (so the counts vary from run to run). A fault is major when it
# started a read, and also when it waited for a page under I/O (the
# replay's) and was retried, so a fault count alone cannot tell a miss
# from a wait. Tracing the replay instead would
# not do: the collector's own libraries (libc, libstdc++) stay cached
# through the drop, so the program would find them there.
OWN_READ_RUNS = 5


def counted(work, prefix, cmd):
    """Runs prefix + cmd with cmd under /usr/bin/time; returns (wall ns of
    it all, the program's major faults, KiB it read itself)."""
    out = os.path.join(work, "time.out")
    # time's child would search PATH for a bare name, reading directories
    # the plan has no reason to hold (456 KiB for clang-19): give it the path.
    exe = shutil.which(cmd[0]) or cmd[0]
    t0 = time.monotonic_ns()
    subprocess.run(prefix + ["/usr/bin/time", "-f", "%F %I", "-o", out, exe] + cmd[1:], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic_ns() - t0
    faults, blocks = open(out).read().split()[-2:]
    return wall, int(faults), int(blocks) // 2


def own_reads(work, replay, cmd):
    B.drop_caches()
    _, faults, kib = counted(work, replay + ["--"], cmd)
    return faults, kib


# Warming ahead of time, as a deploy step before a service starts would: the
# replay alone, AHEAD_WAIT seconds, then the program. Where DAMON's
# proactive reclaim runs (this VM: a pageout scheme on physical memory), it
# can page out part of the warmed cache meanwhile, and the program reads it
# back itself; with --hold the replayer keeps the pages locked until then.
AHEAD_WAIT = 3
AHEAD_RUNS = 6


def ahead_run(work, plan, cmd, hold, damon):
    """One run warmed ahead of time; adds the DAMON pageout schemes the
    replay reported in force (its JSON summary) to the set `damon`."""
    summary = os.path.join(work, "ahead.json")
    B.drop_caches()
    subprocess.run([B.SYSPGO_PREFETCH, plan, "--json", summary] + (["--hold", str(AHEAD_WAIT + 30)] if hold else []),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    replayed = json.load(open(summary))
    damon.update(damon_text(s) for s in replayed["damon_pageout"])
    time.sleep(AHEAD_WAIT)
    try:
        return counted(work, [], cmd)
    finally:
        if hold:
            os.kill(replayed["hold"]["pid"], signal.SIGTERM)


def damon_text(scheme):
    """A pageout scheme as the replayer's JSON lists it (collect/damon.h)."""
    if "min_age_us" in scheme:
        return f"{scheme['path']}: pageout after {scheme['min_age_us'] / 1e6:g} s idle"
    idle = scheme["min_age"] * scheme["aggr_us"] / 1e6
    return f"{scheme['path']} ({scheme['ops']}): pageout after {idle:g} s idle"


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
    floorread = B.build_c(work, "floorread")
    disk = disk_of("/usr/lib")
    scratch = os.path.join(work, "floor.bin")  # on the same disk as /usr/lib (checked below)
    subprocess.run(["dd", "if=/dev/urandom", f"of={scratch}", "bs=1M", "count=512", "status=none", "conv=fsync"],
                   check=True)
    if disk_of(scratch) != disk:
        raise SystemExit(f"bench: {work} is not on {disk}, the disk of /usr/lib; the floor would measure another disk")
    rows, verdicts, ahead_rows, damon = [], [], [], set()
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
            "lead16": [B.SYSPGO_PREFETCH, plan, "--lead", "16", "--"] + cmd,
            "syspgo": [B.SYSPGO, "prefetch", plan, "--"] + cmd,
            "warm": cmd,
        }
        floors = {"extents": extent_requests(shown),
                  "contiguous": sequential_requests(scratch, (plan_bytes + 4095) // 4096 * 4096)}
        wall = {v: [] for v in list(variants) + list(floors) + ["start"]}
        read = {v: [] for v in variants}
        for i in range(a.runs):
            for v in ["cold", "whole", "plan", "bare", "lead16", "syspgo", "warm", "extents", "contiguous", "start"]:
                if v == "start":
                    B.drop_caches()
                    wall[v].append(run_variant([B.SYSPGO_PREFETCH, "--help"]))
                    continue
                if v in floors:
                    B.drop_caches()  # the files' block maps are cold for a replay too
                    wall[v].append(floor_read(floorread, floors[v]))
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
        own = {v: [own_reads(work, replay(v), cmd) for _ in range(OWN_READ_RUNS)] for v in ["plan", "bare"]}
        own_text = " / ".join(f"{B.med([kib for _, kib in own[v]]):.0f} KiB, {B.med([f for f, _ in own[v]]):.0f}"
                              for v in ["plan", "bare"])
        ahead = {False: [], True: []}
        for i in range(AHEAD_RUNS):
            for hold in ([False, True] if i % 2 == 0 else [True, False]):
                ahead[hold].append(ahead_run(work, plan, cmd, hold, damon))
        ahead_rows.append([title] + [
            " / ".join(f"{sum(1 for _, _, kib in ahead[h] if kib > 0)} of {AHEAD_RUNS}" for h in (False, True)),
            " / ".join(f"{max(kib for _, _, kib in ahead[h])}" for h in (False, True)),
            " / ".join(B.fmt_range([w for w, _, _ in ahead[h]]) for h in (False, True))])
        med = {v: B.med(wall[v]) for v in wall}
        rows.append([title] + [B.fmt_range(wall[v]) for v in ["cold", "whole", "plan", "bare", "lead16", "syspgo", "warm", "extents",
                                                              "contiguous", "start"]] +
                    [f"{med['plan'] / med['warm']:.1f}x", f"{med['whole'] / med['plan']:.2f}x",
                     f"{med['cold'] / med['plan']:.2f}x", f"{med['bare'] / med['plan']:.2f}x",
                     f"{len(shown.get('lookups', []))}", own_text,
                     " / ".join(f"{B.med(read[v]) / 1048576:.0f}" for v in ["cold", "whole", "plan"]),
                     f"{plan_bytes / 1048576:.0f} MiB, {len(paths)} files"])
        ms = lambda ns: f"{ns / 1e6:.0f} ms"
        # No replay beats the disk delivering the plan's extents, and no
        # program beats its own warm run; neither begins before the replayer
        # has started. With the same bytes laid out in one run (contiguous),
        # the disk would deliver them sooner.
        bound = med["start"] + max(med["extents"], med["warm"])
        layout_bound = med["start"] + max(med["contiguous"], med["warm"])

        def reach(goal):
            if bound <= goal:
                return "reachable on this disk"
            why = (f"the warm run ({ms(med['warm'])})" if med["warm"] >= med["extents"]
                   else f"reading the plan's extents ({ms(med['extents'])})")
            why += f" after the replayer's start ({ms(med['start'])})"
            layout = (f", reachable only with the plan's bytes in one run ({ms(med['contiguous'])})"
                      if layout_bound <= goal else "")
            return f"**unreachable here**: {why} is above it{layout}"
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
            "| program | cold | whole-file prefetch | plan (syspgo-prefetch) | plan, bare | plan, 16 MiB lead | "
            "plan (syspgo prefetch) | "
            "warm | floor: plan's extents | floor: contiguous | replayer start | "
            "plan ÷ warm | whole ÷ plan | cold ÷ plan | bare ÷ plan | lookups | program's own reads, major faults: plan / bare | "
            "MiB read from disk: cold / whole / plan | plan size |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" +
            "\n".join("| " + " | ".join(r) + " |" for r in rows) +
            f"\n\n*floor: plan's extents*: no program runs; the plan's extents are read from the program's own files "
            f"with O_DIRECT ({FLOOR_REQUEST >> 20} MiB requests at most, {FLOOR_DEPTH} in flight) in replay order, "
            "after a cache drop. It is about the least time this disk takes to deliver them where they lie. "
            "*floor: contiguous*: as many bytes read the same way from one scratch file on the same disk, in order: "
            "what the plan's bytes would cost stored in one run on this disk. *replayer start*: "
            "`syspgo-prefetch --help` after a cache drop, the replayer's own cold start, which comes before its "
            "first read and before the program starts. A target below the replayer's start plus the larger of the "
            "extents' floor and the warm run cannot be met by any replay of this plan.\n\n"
            "*plan, bare*: the same replay with `--no-lookups --io-priority inherit`: no path is looked up first and "
            "the reads are in the program's I/O class, so its own reads wait behind the queued plan (the replayer "
            "before both). *plan, 16 MiB lead*: the same replay with `--lead 16`, the default before 2026-11-23: "
            "the program starts once 16 MiB of the plan are queued, and the lookups the run made before them are "
            "resolved. *lookups*: paths the plan looks up (those the run made before the lead, the plan's first read, go "
            "before any read; the rest beside the reads). *program's own reads*: KiB of block reads the "
            "program started itself during a replay, with the readahead each brings: pages the plan missed, or "
            "reached before the replay had queued them, so they vary from run to run; and its major page faults; "
            f"from `/usr/bin/time -f '%F %I'`, medians of {OWN_READ_RUNS} replays. A fault that waited for a page "
            "the replay was reading, and was retried, counts as major too.\n\n"
            "Targets (issue 7): plan within 2x of warm, at least 2x faster than whole-file prefetch, at least 4x "
            "faster than cold, reading no more than cold + 10%. Plan = the syspgo-prefetch column.\n\n" +
            "\n".join(verdicts) + "\n\n"
            f"Warmed ahead of time: the page cache is dropped, `syspgo-prefetch PLAN` runs alone (with `--hold`, or "
            f"not), then {AHEAD_WAIT} s later the program; {AHEAD_RUNS} runs of each, interleaved. DAMON's proactive "
            f"pageout schemes in force, as the replays reported them: {'; '.join(sorted(damon)) or 'none'}.\n\n"
            "| program | runs in which the program read from disk: no hold / --hold | most KiB it read: no hold / "
            "--hold | program's wall time, median (min–max): no hold / --hold |\n"
            "|---|---|---|---|\n" +
            "\n".join("| " + " | ".join(r) + " |" for r in ahead_rows) + "\n")
    B.write_section("coldstart", f"sudo bench/coldstart.py --runs {a.runs}", body)
    print(body)


if __name__ == "__main__":
    main()
