#!/usr/bin/env python3
"""tiers.py - do the lean and the full tier give the same answers?

Records each of the three stories with `syspgo collect` (default: the lean
tier) and with `--detail full`, interleaved, --runs rounds, and compares what
the analyses conclude from each: the answers, not the timings, which differ
from run to run anyway.

- story 1, a training loop stalled by synchronous checkpoints
  (examples/checkpoint_stall): `analyze stalls` (the I/O finding's cause,
  syscalls, file, bytes written, period in steps) and `analyze files` (calls
  and bytes per regular file);
- story 2, a cold start of small random reads (examples/cold_start,
  `--cold --no-readahead`): `analyze access` (files in first-touch order,
  bytes used) and the prefetch plan's files and extents;
- story 3, a memory cgroup whose reclaim evicts its own mapped library
  (examples/pagecache_thrash in a 16 MiB cgroup): `analyze pagecache` (the
  top file, its reclaim kind, deleting tasks and cgroup limit).

An answer counts as the same when it is equal in every round; the table
says how many rounds agreed. Writes its section of bench/RESULTS.md.

usage: sudo bench/tiers.py [--runs 5]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import benchlib as B

EX = os.path.join(B.BUILD, "examples", "bin")


def syspgo(*args):
    p = subprocess.run([B.SYSPGO, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench: syspgo {' '.join(args)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p.stdout


def collect(db, tier, opts, cmd):
    if os.path.exists(db):
        os.unlink(db)
    syspgo("collect", "--detail", tier, "-o", db, *opts, "--", *cmd)


def story1(work, tier):
    db = os.path.join(work, f"s1-{tier}.db")
    ckpt = os.path.join(work, "ckpt")
    os.makedirs(ckpt, exist_ok=True)
    collect(db, tier, [], [os.path.join(EX, "checkpoint_stall"), "--steps", "10", "--period", "5", "--mb", "50",
                           "--step-ms", "200", ckpt])
    stalls = json.loads(syspgo("analyze", db, "stalls", "--json"))
    io = [f["detail"] for f in stalls["findings"] if f.get("detail", {}).get("cause") not in (None, "cpu")]
    top = io[0] if io else {}
    files = json.loads(syspgo("analyze", db, "files", "--json"))
    ours = [f for f in files if f["path"].startswith(ckpt) or "checkpoint" in f["path"]]
    return {
        "stalls: the I/O finding (cause, syscalls, file, MiB written, steps)":
            (top.get("cause"), tuple(top.get("syscalls", [])), re.sub(r"\d+", "N", str(top.get("file"))),
             round(top.get("bytes_written", 0) / 2**20), top.get("period_steps")),
        "files: checkpoint files (writes, MiB written, syncs)":
            tuple(sorted((f["writes"], round(int(f["write_bytes"]) / 2**20), f["syncs"]) for f in ours)),
    }


def story2(work, tier):
    d = os.path.join(work, "cold")
    if not os.path.isdir(d):
        os.makedirs(d)
        subprocess.run([os.path.join(EX, "cold_start"), d, "--make"], check=True, stdout=subprocess.DEVNULL)
    db = os.path.join(work, f"s2-{tier}.db")
    collect(db, tier, ["--cold", "--no-readahead", "--probes", "fileio,faults,pagecache"],
            [os.path.join(EX, "cold_start"), d])
    access = json.loads(syspgo("analyze", db, "access", "--json"))
    plan = os.path.join(work, f"s2-{tier}.plan")
    syspgo("optimize", db, "--emit", "plan", "-o", plan)
    reads = re.search(r"reads\s+\S+ \S+ \((\d+) bytes\) in (\d+) extents of (\d+) files", syspgo("plan-show", plan))
    return {
        "access: files in first-touch order":
            tuple(os.path.basename(f["path"]) for f in access["files"]),
        # The dynamic loader's and libc's pages used differ by a page from
        # one cold run to the next, in either tier (the table's last
        # columns say how often).
        "access: KiB used per file, same order":
            tuple(int(f["used_bytes"]) // 1024 for f in access["files"]),
        # Neighbouring touches merge or not by a page from run to run, in
        # either tier: the extents to the nearest ten.
        "plan: files, extents (nearest 10)": (int(reads.group(3)), round(int(reads.group(2)), -1)) if reads else None,
    }


def story3(work, tier):
    db = os.path.join(work, f"s3-{tier}.db")
    collect(db, tier, ["--as-root"], [os.path.join(B.ROOT, "examples", "pagecache_thrash", "run_in_memcg.sh"),
                                      "--bin", os.path.join(EX, "pagecache_thrash"), "--limit-mb", "16"])
    pc = json.loads(syspgo("analyze", db, "pagecache", "--json"))
    top = pc["files"][0] if pc["files"] else {}
    # The deleting tasks with 1% of the deletions or more: DAMON (kdamond)
    # pages out a page or two of any run now and then, in either tier.
    deleters = top.get("deleters", {})
    main_deleters = tuple(sorted(d for d, n in deleters.items() if n * 100 >= sum(deleters.values())))
    return {
        "pagecache: top file, reclaim, deleting tasks (1%+), cgroup limit (MiB)":
            (re.sub(r"-\w+\.so$", ".so", os.path.basename(top.get("file", ""))), top.get("reclaim"),
             main_deleters, round((top.get("limit_bytes") or 0) / 2**20)),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    work = B.work_dir("tiers", a.runs)
    stories = [("1 checkpoint stall", story1), ("2 cold start", story2), ("3 memory-cgroup thrash", story3)]
    answers = {}  # (story, what) -> tier -> [answer per round]
    for i in range(a.runs):
        for name, fn in stories:
            for tier in (["lean", "full"] if i % 2 == 0 else ["full", "lean"]):
                print(f"round {i + 1}/{a.runs}: story {name}, {tier}", flush=True)
                for what, ans in fn(work, tier).items():
                    answers.setdefault((name, what), {}).setdefault(tier, []).append(ans)
    rows = []
    for (name, what), by in answers.items():
        lean, full = by["lean"], by["full"]
        agree = sum(l == f for l, f in zip(lean, full))
        # How often one tier agrees with itself from a round to the next:
        # what the run-to-run variation alone gives.
        steady = lambda xs: f"{sum(x == y for x, y in zip(xs, xs[1:]))} of {len(xs) - 1}"
        show = lambda xs: str(max(set(map(str, xs)), key=list(map(str, xs)).count)).replace("|", "/")
        rows.append(f"| {name} | {what} | {show(lean)} | {show(full)} | {agree} of {len(lean)} | {steady(lean)} "
                    f"| {steady(full)} |")
    body = (f"Each story recorded in both tiers, interleaved, {a.runs} rounds; the answers compared round by round "
            "(the most frequent shown). *Lean, round to round* and *full, round to round*: how often a tier's answer "
            "equals its own in the round before, the variation from one run to the next that the comparison "
            "between tiers also carries.\n\n| story | answer | lean (default) | --detail full | rounds equal "
            "| lean, round to round | full, round to round |\n|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
    B.write_section("tiers: the same answers from the lean and the full tier", f"sudo bench/tiers.py --runs {a.runs}",
                    body)
    print(body)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
