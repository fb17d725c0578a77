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

With --images it measures images instead (issue 25) and writes the section
coldstart_images: each program gets a root directory of its own (the files a
cold run on this host touched, plus the trees it ships, such as
/usr/lib/llvm-19/bin), run with chroot. From a cold run in that directory,
`syspgo optimize --emit squashfs-sort --source-dir ROOT` orders
`mksquashfs ROOT IMG -sort FILE`; the images (unsorted, sorted, sorted and
compressed) are loop-mounted read-only with direct I/O (so the image file
is not cached twice), and each place the program runs from gets its own plan,
recorded there. Then, interleaved, cold from each place with and without
`syspgo-prefetch PLAN -- chroot PLACE CMD`, warm, and the floors.

With --readahead it measures readahead plans instead (issue 25) and writes
the section coldstart_readahead: from one cold run of each program
(`collect --cold --no-readahead`), `syspgo optimize --emit plan` and
`--emit readahead`; then, interleaved, the page cache dropped before each:
cold (the kernel's readahead), cold with the readahead plan (`syspgo-prefetch
--readahead RA -- CMD`, and the same preloaded by hand, without the
replayer), the prefetch plan, and the prefetch plan with the readahead plan.

With --containers it measures a container's cold start instead (issue 44)
and writes the section coldstart_container: python3 importing numpy in a
podman container from the numpy root directory of --images. The
container's start is recorded by its cgroup (`podman init`, then `collect
--container`, then `podman start`); from the recording, a laid-out EROFS
image of the directory and its plan; then, interleaved, `podman run
--read-only --rootfs MOUNT` cold from an unsorted EROFS image, from the
laid-out one with and without its plan replayed, warm, and a container
running /bin/true, warm and cold (podman's own start).

usage: sudo bench/coldstart.py [--runs 10] [--images | --readahead | --containers]
"""
import argparse
import ctypes
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time

import benchlib as B

MS_RDONLY = 1  # <sys/mount.h>


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



def run_variant(cmd, usage=None):
    """Runs cmd; returns its wall time in ns. With a list `usage`, appends
    (system CPU ns, major page faults) of cmd and its children (wait4)."""
    wall, ru, _, _ = B.run_measured(cmd)
    if usage is not None:
        usage.append((int(ru.ru_stime * 1e9), ru.ru_majflt))
    return wall


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
    replayed = B.read_json(summary)
    damon.update(damon_text(s) for s in replayed["damon_pageout"])
    time.sleep(AHEAD_WAIT)
    try:
        return counted(work, [], cmd)
    finally:
        if hold:
            os.kill(replayed["hold"]["pid"], signal.SIGTERM)


def damon_text(scheme):
    """A pageout scheme as the replayer's JSON lists it (common/damon.h)."""
    if "min_age_us" in scheme:
        return f"{scheme['path']}: pageout after {scheme['min_age_us'] / 1e6:g} s idle"
    idle = scheme["min_age"] * scheme["aggr_us"] / 1e6
    return f"{scheme['path']} ({scheme['ops']}): pageout after {idle:g} s idle"


# ---- Images in first-touch order (--images) --------------------------------

def add_to_root(root, path, seen=None):
    """Copies path from this host into root at the same place, with every
    symbolic link on its way (the host's /lib -> usr/lib among them), so
    that the copy resolves inside root as the original does here."""
    seen = set() if seen is None else seen
    if path in seen:
        return
    seen.add(path)
    parts = os.path.normpath(path).strip("/").split("/")
    cur = "/"
    for i, part in enumerate(parts):
        nxt = os.path.join(cur, part)
        dst = root + nxt
        if os.path.islink(nxt):
            if not os.path.lexists(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                os.symlink(os.readlink(nxt), dst)
            target = os.path.normpath(os.path.join(cur, os.readlink(nxt), *parts[i + 1:]))
            return add_to_root(root, target, seen)
        cur = nxt
    dst = root + cur
    if os.path.isfile(cur) and not os.path.lexists(dst):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(cur, dst)


def plan_of(db, plan, cmd, summary=False):
    """Records one cold run of cmd (readahead off) into db and makes its
    plan; returns the plan as plan-show --json gives it."""
    for f in (db, plan):
        if os.path.exists(f):
            os.unlink(f)
    subprocess.run([B.SYSPGO, "collect", "--cold", "--no-readahead", "--probes", "fileio,faults,pagecache", "-o", db,
                    "--"] + cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([B.SYSPGO, "optimize", db, "--emit", "plan", "-o", plan], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads(subprocess.run([B.SYSPGO, "plan-show", plan, "--json"], check=True, capture_output=True,
                                     text=True).stdout)


def loop_mount(image, mnt, fstype, direct_io=True):
    """Mounts image read-only at mnt through a loop device with direct I/O
    (unless the image is in memory, where there is no cache to bypass)
    and the mq-deadline scheduler; returns the loop device. A loop device
    comes with none: a replay of a laid-out image's plan is hundreds of
    small reads of adjacent blocks, which mq-deadline merges (story 2's
    1,860 reached the loop device as 630 to 930) and none passes on one by
    one."""
    dev = subprocess.run(["losetup", "--find", "--show", "--read-only", f"--direct-io={'on' if direct_io else 'off'}",
                          image], check=True,
                         capture_output=True, text=True).stdout.strip()
    with open(f"/sys/block/{os.path.basename(dev)}/queue/scheduler", "w") as f:
        f.write("mq-deadline")
    os.makedirs(mnt, exist_ok=True)
    subprocess.run(["mount", "-t", fstype, "-o", "ro", dev, mnt], check=True)
    return dev


def file_mount(image, mnt, read_ahead_kb):
    """Mounts an EROFS image read-only at mnt from the image file itself, no
    loop device (Linux 6.12 and later; what containerd's EROFS snapshotter
    and util-linux 2.41's mount do by themselves), and sets the read_ahead_kb
    of the mount's own backing device info when one is given."""
    before = set(os.listdir("/sys/class/bdi"))
    os.makedirs(mnt, exist_ok=True)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(image.encode(), mnt.encode(), b"erofs", MS_RDONLY, None) != 0:
        err = ctypes.get_errno()
        raise SystemExit(f"coldstart.py: mounting {image} at {mnt} from the file failed: {os.strerror(err)} (EROFS "
                         "mounts a file without a loop device from Linux 6.12, with CONFIG_EROFS_FS_BACKED_BY_FILE)")
    # The mount's bdi is named by a sequence number (erofs-N), not by its
    # device: the one this mount added.
    (bdi,) = [b for b in set(os.listdir("/sys/class/bdi")) - before if b.startswith("erofs-")]
    if read_ahead_kb is not None:
        with open(os.path.join("/sys/class/bdi", bdi, "read_ahead_kb"), "w") as f:
            f.write(str(read_ahead_kb))


# The images, in the order of the tables: (name, file system, how it is
# made from ROOT into IMG, with SORT the squashfs sort file and DB the cold
# run in the directory). Each family has an image as its tool makes it
# and one laid out in first-touch order.
IMAGES = [
    ("image", "squashfs", lambda root, img, sort, db: ["mksquashfs", root, img, "-noappend", "-no-progress", "-quiet",
                                                       "-noI", "-noD", "-noF", "-noX"]),
    ("sorted", "squashfs", lambda root, img, sort, db: ["mksquashfs", root, img, "-noappend", "-no-progress", "-quiet",
                                                        "-noI", "-noD", "-noF", "-noX", "-sort", sort]),
    # lz4, not the default gzip: on this shared 2-CPU machine gzip took over
    # 10 minutes for clang's tree.
    ("sorted.lz4", "squashfs", lambda root, img, sort, db: ["mksquashfs", root, img, "-noappend", "-no-progress",
                                                            "-quiet", "-comp", "lz4", "-sort", sort]),
    ("erofs", "erofs", lambda root, img, sort, db: ["mkfs.erofs", "--quiet", img, root]),
    ("erofs.sorted", "erofs", lambda root, img, sort, db: [B.SYSPGO, "optimize", db, "--emit", "erofs",
                                                           "--source-dir", root, "-o", img, "--json", img + ".json"]),
    # Compressed: as mkfs.erofs makes it (its compact index), and laid out
    # (the full index, whose addresses let each block move).
    ("erofs.lz4hc", "erofs", lambda root, img, sort, db: ["mkfs.erofs", "--quiet", "-zlz4hc", img, root]),
    ("erofs.sorted.lz4hc", "erofs", lambda root, img, sort, db: [B.SYSPGO, "optimize", db, "--emit", "erofs",
                                                                 "--compress", "lz4hc", "--source-dir", root, "-o",
                                                                 img, "--json", img + ".json"]),
]
# The EROFS images mounted again from their files, no loop device: (place,
# the image it mounts, the mount's read_ahead_kb or None for the kernel's).
# The sorted one reads no window around a page: its pages lie in the order
# the program touches them, so the backing file's own sequential readahead
# brings the next ones, where a window around each page would read pages of
# the same file that lie elsewhere in the image.
FILE_MOUNTS = [("erofs.file", "erofs", None), ("erofs.sorted.file", "erofs.sorted", 0)]
# The laid-out EROFS images again from memory (a copy in /dev/shm behind a
# loop device): a cold run there reads no disk, so what it costs beyond
# warm is the file system's own path, decompression included. (place, the
# image it mounts.)
MEMORY_MOUNTS = [("erofs.sorted.mem", "erofs.sorted"), ("erofs.sorted.lz4hc.mem", "erofs.sorted.lz4hc")]
# How the replayer runs for a place, where not as it does by default (its
# reads in the idle I/O class, so the program's own go first): the plan of
# the laid-out image on a loop device is one sequential read, and with its
# reads in the program's class mq-deadline merges them with the program's
# own. Story 2, 9 interleaved rounds: 28.4 ms so, 37.5 ms with idle reads,
# 34.6 ms with idle reads and no scheduler (as before); clang the same
# either way.
PLAN_OPTIONS = {"erofs.sorted": ["--io-priority", "inherit"], "erofs.sorted.lz4hc": ["--io-priority", "inherit"]}
# (unsorted, sorted) per family: what the targets compare.
FAMILIES = [("squashfs", "image", "sorted"), ("erofs", "erofs", "erofs.sorted"),
            ("erofs, file-backed", "erofs.file", "erofs.sorted.file"), ("erofs, lz4hc", "erofs.lz4hc",
                                                                        "erofs.sorted.lz4hc")]
# A family whose sorted image has a memory mount: its floor also holds that
# run (the replay and the program with no disk read).
MEMORY_FLOOR = {srt: mem for mem, srt in MEMORY_MOUNTS}


def image_programs(work):
    """(title, root's name, command inside the root, trees copied whole,
    the example binary to copy in or None)."""
    example = os.path.join(B.BUILD, "examples", "bin", "cold_start")
    return [
        ("examples/cold_start (story 2)", "story2", ["/cold_start", "/data"], [], example),
        ("clang-19 --version", "clang", ["/usr/bin/clang-19", "--version"], ["/usr/lib/llvm-19/bin"], None),
        ("python3 -c 'import numpy'", "numpy", ["/usr/bin/python3", "-c", "import numpy"],
         ["/usr/lib/python3.11", "/usr/lib/python3/dist-packages/numpy"], None),
    ]


def make_root(work, name, cmd, trees, example):
    """A directory holding cmd's files: what a cold run on this host touched
    (its plan), the command's path, and the trees whole."""
    root = os.path.join(work, name, "root")
    os.makedirs(root)
    for d in ("bin", "lib", "lib64", "sbin"):  # this host's merged /usr
        if os.path.islink("/" + d):
            os.symlink(os.readlink("/" + d), os.path.join(root, d))
    if example:
        shutil.copy2(example, root + "/cold_start")
        os.makedirs(root + "/data")
        subprocess.run([example, root + "/data", "--make"], check=True, stdout=subprocess.DEVNULL)
        host_cmd = [example, root + "/data"]
    else:
        host_cmd = cmd
    for t in trees:
        os.makedirs(os.path.dirname(root + t), exist_ok=True)
        subprocess.run(["cp", "-a", t, root + t], check=True)
    shown = plan_of(os.path.join(work, "host.db"), os.path.join(work, "host.plan"), host_cmd)
    # The paths it looked up bring the symbolic links on the way (a library
    # named through /etc/alternatives).
    looked_up = [l["path"] for l in shown.get("lookups", [])]
    for p in [f["path"] for f in shown["files"]] + looked_up + [cmd[0], "/lib64/ld-linux-x86-64.so.2"]:
        if not p.startswith(work) and os.path.lexists(p):
            add_to_root(root, p)
    subprocess.run(["chroot", root] + cmd, check=True, stdout=subprocess.DEVNULL)
    return root


def md_table(header, rows):
    """A Markdown table: the header's cells, its rule, then the rows, one a
    line."""
    return "\n".join("| " + " | ".join(r) + " |" for r in [header, ["---"] * len(header)] + rows)


def ratio_interval(a, b, resamples=2000):
    """The 95% bootstrap interval of median(a) / median(b), a[i] and b[i]
    measured in the same round: rounds are resampled, pairs kept together.
    Seeded, so a section is the same for the same runs."""
    rng = random.Random(0)
    n = len(a)
    ratios = sorted(B.med([a[i] for i in idx]) / B.med([b[i] for i in idx])
                    for idx in ([rng.randrange(n) for _ in range(n)] for _ in range(resamples)))
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def targets(issue, verdicts, goal=""):
    """The closing paragraph every section ends with: the issue's targets,
    then one verdict a line."""
    return f"Targets (issue {issue}){': ' + goal if goal else ':'}\n\n" + "\n".join(verdicts) + "\n"


def publish(section, a, body, *options):
    """Writes `body` as RESULTS.md's section `section`, under the command that makes it again (the build it
    measured named where that is not the default), and prints it."""
    build = [f"SYSPGO_BUILD={os.environ['SYSPGO_BUILD']}"] if "SYSPGO_BUILD" in os.environ else []
    B.write_section(section, " ".join(["sudo", *build, "bench/coldstart.py", *options, "--runs", str(a.runs)]), body)
    print(body)


def images(a):
    work = B.work_dir("coldstart-images", a.runs)
    B.require("mksquashfs", "squashfs-tools", "what builds the squashfs images")
    B.require("mkfs.erofs", "erofs-utils", "what builds the EROFS images")
    disk = disk_of(work)
    scratch = os.path.join(work, "floor.bin")
    subprocess.run(["dd", "if=/dev/urandom", f"of={scratch}", "bs=1M", "count=256", "status=none", "conv=fsync"],
                   check=True)
    floorread = B.build_c(work, "floorread")
    names = [n for n, _, _ in IMAGES]
    places = ["dir"] + names + [p for p, _, _ in FILE_MOUNTS] + [p for p, _ in MEMORY_MOUNTS]
    cols = [v for p in places for v in (p, p + "+plan")] + ["warm"] + [f"contiguous:{s}" for _, _, s in FAMILIES] + \
        [f"front:{s}" for _, _, s in FAMILIES] + [f"front:{m}" for m, _ in MEMORY_MOUNTS] + \
        ["start"]
    time_rows, byte_rows, cpu_rows, glance_rows, verdicts, mounts, in_memory = [], [], [], [], [], [], []
    try:
        for title, name, cmd, trees, example in image_programs(work):
            root = make_root(work, name, cmd, trees, example)
            # Where each place is mounted, and what its floor reads the
            # image's front through: its loop device, or the image file.
            at, source_of, image_of = {"dir": root}, {}, {}
            dir_db, sort = os.path.join(work, name, "dir.db"), os.path.join(work, name, "sort.txt")
            plans = {"dir": os.path.join(work, name, "dir.plan")}
            shown = {"dir": plan_of(dir_db, plans["dir"], ["chroot", root] + cmd)}
            subprocess.run([B.SYSPGO, "optimize", dir_db, "--emit", "squashfs-sort", "--source-dir", root, "-o", sort],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            sizes = {}
            for img, fstype, make in IMAGES:
                path = os.path.join(work, name, img + ".img")
                subprocess.run(make(root, path, sort, dir_db), check=True, stdout=subprocess.DEVNULL)
                sizes[img] = os.path.getsize(path)
                mnt = os.path.join(work, name, img + ".mnt")
                mounts.append((mnt, loop_mount(path, mnt, fstype)))
                at[img], source_of[img], image_of[img] = mnt, mounts[-1][1], path
            for place, img, read_ahead_kb in FILE_MOUNTS:
                mnt = os.path.join(work, name, place + ".mnt")
                file_mount(image_of[img], mnt, read_ahead_kb)
                mounts.append((mnt, None))
                at[place], source_of[place] = mnt, image_of[img]
            for place, img in MEMORY_MOUNTS:
                copy = f"/dev/shm/{os.path.basename(work)}-{name}-{img}.img"  # the work dir's name: one run's own
                shutil.copyfile(image_of[img], copy)
                in_memory.append(copy)
                mnt = os.path.join(work, name, place + ".mnt")
                mounts.append((mnt, loop_mount(copy, mnt, "erofs", direct_io=False)))
                at[place], source_of[place] = mnt, mounts[-1][1]
            for img in places[1:]:
                plans[img] = os.path.join(work, name, img + ".plan")
                shown[img] = plan_of(os.path.join(work, name, img + ".db"), plans[img], ["chroot", at[img]] + cmd)
            plan_bytes = {p: sum(e["length"] for f in shown[p]["files"] for e in f["extents"]) for p in places}
            # What a replay of a sorted image's plan reads: its pages, or for
            # a compressed image the blocks that hold them (the layout's own
            # count, from its JSON summary).
            layouts = {i: B.read_json(image_of[i] + ".json") for i in names if os.path.exists(image_of[i] + ".json")}
            floor_bytes = {s: layouts[s]["blocks_placed"] * layouts[s]["block_size"]
                           if s in layouts and layouts[s]["compress"] != "none" else plan_bytes[s]
                           for _, _, s in FAMILIES}
            variants = {}
            for place in places:
                variants[place] = ["chroot", at[place]] + cmd
                variants[place + "+plan"] = [B.SYSPGO_PREFETCH, plans[place], *PLAN_OPTIONS.get(place, []), "--",
                                             "chroot", at[place]] + cmd
            variants["warm"] = ["chroot", root] + cmd
            floors = {f"contiguous:{s}": sequential_requests(scratch, (floor_bytes[s] + 4095) // 4096 * 4096)
                      for _, _, s in FAMILIES}
            # The same bytes from the front of the sorted image, where its
            # plan's blocks lie, through what its mount reads (the loop
            # device, or the file): what that adds to a read in one run.
            floors.update({f"front:{s}": sequential_requests(source_of[s], (floor_bytes[s] + 4095) // 4096 * 4096)
                           for _, _, s in FAMILIES})
            # From memory, the loop device copies each block once, which a
            # disk's DMA does not: what reading the same blocks through it
            # takes is taken off the memory floor, whole.
            floors.update({f"front:{m}": sequential_requests(source_of[m], (floor_bytes[i] + 4095) // 4096 * 4096)
                           for m, i in MEMORY_MOUNTS})
            wall = {v: [] for v in cols}
            read = {v: [] for v in variants}
            usage = {v: [] for v in variants}
            for i in range(a.runs):
                for v in (cols if i % 2 == 0 else cols[::-1]):
                    if v == "start":
                        B.drop_caches()
                        wall[v].append(run_variant([B.SYSPGO_PREFETCH, "--help"]))
                        continue
                    if v in floors:
                        B.drop_caches()
                        wall[v].append(floor_read(floorread, floors[v]))
                        continue
                    if v != "warm":
                        B.drop_caches()
                    else:
                        run_variant(variants[v])
                    s0 = disk_sectors_read(disk)
                    wall[v].append(run_variant(variants[v], usage[v]))
                    read[v].append((disk_sectors_read(disk) - s0) * 512)
            med = {v: B.med(wall[v]) for v in wall}
            sys_ms = lambda v: B.med([u[0] for u in usage[v]]) / 1e6
            faults = lambda v: B.med([u[1] for u in usage[v]])
            cpu_rows.append([title] + [f"{sys_ms(v):.0f} / {faults(v):.0f}" for v in variants])
            mib = lambda v: B.med(read[v]) / 1048576
            time_rows.append([title] + [B.fmt_range(wall[v]) for v in cols])
            byte_rows.append([title] + [f"{mib(v):.0f}" for v in variants if v != "warm"] +
                             [" / ".join(f"{plan_bytes[p] / 1048576:.0f} MiB" +
                                         (f" in {floor_bytes[p] / 1048576:.0f} MiB of compressed blocks"
                                          if floor_bytes[p] != plan_bytes[p] else "") +
                                         f", {len(shown[p]['files'])} files" for _, _, p in FAMILIES),
                              " / ".join(f"{sizes[i] / 1048576:.0f}" for i in names)])
            ms = lambda ns: f"{ns / 1e6:.0f} ms"
            for family, unsorted, srt in FAMILIES:
                best = med[srt + "+plan"]
                floor = med["start"] + max(med["contiguous:" + srt], med["warm"])
                front = med["start"] + max(med["front:" + srt], med["warm"])
                mem, mem_text = MEMORY_FLOOR.get(srt), ""
                if mem:  # no replay from the disk beats the same replay from memory, less its copy
                    memory_floor = med[mem + "+plan"] - med["front:" + mem]
                    floor, front = max(floor, memory_floor), max(front, memory_floor)
                    mem_text = (f"; no less than the same replay and run with the image in memory, "
                                f"{ms(med[mem + '+plan'])}, less its loop device's copy, {ms(med['front:' + mem])}")
                # A target is "below the floor" where reaching it would take
                # less than the floor: no replay on this machine gets there.
                # The table and the verdicts say it the same way.
                mark = lambda target: "met" if best <= target else ("below the floor" if target < floor else "not met")
                glance_rows.append([title, family, ms(med[unsorted]), ms(best), f"{med[unsorted] / best:.2f}x",
                                    mark(med[unsorted] / 4), ms(floor), ms(med["warm"]),
                                    f"{best / med['warm']:.2f}x", mark(2 * med["warm"]), f"{best / floor:.2f}x",
                                    f"{ms(med[srt])} vs {ms(med[unsorted + '+plan'])}"])
                verdicts.append(
                    f"- {title}, {family}: sorted image + plan ≥ 4x faster than the unsorted image cold "
                    f"({ms(med[unsorted] / 4)}): {mark(med[unsorted] / 4)} ({ms(best)}, "
                    f"{med[unsorted] / best:.2f}x); within 2x of warm ({ms(2 * med['warm'])}): "
                    f"{mark(2 * med['warm'])} ({best / med['warm']:.2f}x); floor here "
                    f"(replayer start + the larger of the sorted plan's bytes read in one run and the warm run{mem_text}): "
                    f"{ms(floor)}, reached within {best / floor:.2f}x (target 1.15x: "
                    f"{'met' if best <= 1.15 * floor else 'not met'}; with the bytes read from the image's front as its "
                    f"mount reads it, {ms(front)}, within {best / front:.2f}x); bytes read ≤ the "
                    f"unsorted image cold's: "
                    f"{'met' if mib(srt + '+plan') <= mib(unsorted) else 'not met'} ({mib(srt + '+plan'):.0f} vs "
                    f"{mib(unsorted):.0f} MiB); sorted image alone faster than the unsorted image with its plan: "
                    f"{'met' if med[srt] < med[unsorted + '+plan'] else 'not met'} ({ms(med[srt])} vs "
                    f"{ms(med[unsorted + '+plan'])}; system CPU {sys_ms(srt):.0f} vs {sys_ms(unsorted + '+plan'):.0f} "
                    f"ms, warm {sys_ms('warm'):.0f} ms; major faults {faults(srt):.0f} vs "
                    f"{faults(unsorted + '+plan'):.0f})")
    finally:
        for mnt, dev in reversed(mounts):
            subprocess.run(["umount", mnt])
            if dev:
                subprocess.run(["losetup", "-d", dev])
        for copy in in_memory:
            os.unlink(copy)
    label = lambda v: "replayer start" if v == "start" else v.replace("+plan", " + plan").replace(
        "contiguous:", "floor: contiguous, ").replace("front:", "floor: image front, ")
    body = (f"Wall time of prefetch + program, medians of {a.runs} interleaved rounds (min–max, every other round "
            "in reverse order); the page cache is dropped before every run but warm. Every program runs with "
            "`chroot PLACE CMD`; PLACE is its root directory (*dir*: the files a cold run on this host touched, "
            "plus the trees it ships: /usr/lib/llvm-19/bin for clang, /usr/lib/python3.11 and numpy for "
            "python), or an image of that directory, loop-mounted read-only with direct I/O and the mq-deadline scheduler (a loop device comes with none) "
            "on the same disk. "
            "squashfs: *image* (`mksquashfs ROOT IMG -noI -noD -noF -noX`, files in directory order), *sorted* "
            "(the same with `-sort` from `syspgo optimize DIR.db --emit squashfs-sort --source-dir ROOT`, made from "
            "a cold run in the directory), *sorted.lz4* (sorted, compressed with `-comp lz4`: the default gzip "
            "took over 10 minutes for clang's tree on this shared machine). EROFS: *erofs* (`mkfs.erofs IMG ROOT`, "
            "uncompressed, files in directory order), *erofs.sorted* (`syspgo optimize DIR.db --emit erofs "
            "--source-dir ROOT`: mkfs.erofs with 4 KiB chunks, then every page the cold run touched first, in "
            "replay order, optimize/erofs_image.h), *erofs.lz4hc* (`mkfs.erofs -zlz4hc IMG ROOT`, as mkfs.erofs "
            "compresses: files in directory order, compact index), *erofs.sorted.lz4hc* (`syspgo optimize DIR.db "
            "--emit erofs --compress lz4hc --source-dir ROOT`: mkfs.erofs -zlz4hc -Elegacy-compress, then every "
            "compressed block holding a page the cold run touched first, in replay order). *erofs.sorted.mem*, "
            "*erofs.sorted.lz4hc.mem*: the two laid-out images copied to /dev/shm and mounted through a loop device "
            "there, so a cold run reads no disk: what remains beyond warm is the file system's own path, "
            "decompression included. *erofs.file*, *erofs.sorted.file*: the same two images mounted "
            "from their files without a loop device (Linux 6.12 and later: what containerd's EROFS snapshotter and "
            "util-linux 2.41's mount do), the sorted one with its mount's read_ahead_kb set to 0 (docs/coldstart.md: "
            "its pages lie in the order the program touches them, so the image file's own readahead brings the next "
            "ones). *+ plan*: `syspgo-prefetch PLAN -- chroot PLACE CMD`, with a "
            "plan recorded from a cold run at that place (`collect --cold --no-readahead`); for *erofs.sorted* "
            "and *erofs.sorted.lz4hc* with `--io-priority inherit` (its plan is one sequential read of the image's front, and in the "
            "program's I/O class mq-deadline merges its reads with the program's). *warm*: the directory, "
            "cached.\n\n"
            "The targets at a glance, per image family (the sorted image + plan against the unsorted image cold; "
            "*floor* as in the targets below: the most of the replayer's start plus the plan's bytes read in one "
            "run, the warm run, and for a family with a memory mount its in-memory replay and run less its loop "
            "device's copy; *below the floor*: the target asks for less than the floor):\n\n" +
            md_table(["program", "family", "unsorted cold", "sorted + plan", "speedup", "≥ 4x", "floor", "warm",
                      "÷ warm", "≤ 2x warm", "÷ floor", "sorted alone vs unsorted + plan"], glance_rows) + "\n\n"
            "Every place:\n\n" +
            md_table(["program"] + [label(v) for v in cols], time_rows) + "\n\n"
            "MiB read from the disk (/proc/diskstats, the disk's counter: it also counts other work's reads), the "
            "plans of the sorted images, and the images' sizes:\n\n" +
            md_table(["program"] + [label(v) for v in variants if v != "warm"] +
                     ["sorted plans: " + " / ".join(s for _, _, s in FAMILIES),
                      "image sizes, MiB: " + " / ".join(names)], byte_rows) + "\n\n"
            "System CPU time (ms) and major page faults of the run's process tree (wait4's rusage: the replayer, "
            "chroot and the program), medians. A file-backed mount reads its image file through that file's page "
            "cache and copies each page into its own, a loop device with direct I/O reads into the mount's pages "
            "only: that copy is in the system time of every run from a file-backed mount.\n\n" +
            md_table(["program"] + [label(v) for v in variants], cpu_rows) +
            "\n\n*floor: contiguous*: as many bytes as the sorted image's plan holds (for a compressed image, its "
            "compressed blocks that hold the plan's pages, as the layout counted them), read with O_DIRECT from one "
            f"scratch file on the same disk in order ({FLOOR_REQUEST >> 20} MiB requests, {FLOOR_DEPTH} in flight): "
            "the plan's bytes stored in one run. *floor: image front*: as many bytes read the same way from the start "
            "of the sorted image, where its metadata and its plan's blocks lie, through its loop device (direct I/O) "
            "or from the image file for a file-backed mount: the same read with the mount's path in it; for *.mem*, "
            "through the loop device of the in-memory copy: its copy of each block, which a disk's DMA does not "
            "cost, and which the memory floor takes off the in-memory run whole (a lower bound: the loop device "
            "copies beside the program). *replayer start*: `syspgo-prefetch --help` after a cache drop. "
            "mksquashfs's sort orders whole files, not the pages inside one: a program that touches scattered "
            "pages of one big file (story 2) gains nothing from it; the EROFS layout orders pages.\n\n" +
            targets(25, verdicts))
    publish("coldstart_images", a, body, "--images")


# ---- Readahead plans (--readahead) -----------------------------------------

READAHEAD_VARIANTS = ["cold", "cold+ra", "ra+device", "preload", "plan", "plan+ra"]


def cached_bytes(paths):
    """Bytes of these files in the page cache (fincore)."""
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES"] + paths, capture_output=True,
                         text=True).stdout
    return sum(int(x) for x in out.split())


def listed_files(ra):
    """The files a readahead plan lists, whichever the advice."""
    return [f[10] for f in (line.rstrip("\n").split("\t") for line in open(ra)) if f[0] == "file" and len(f) == 11]


def device_advice(ra):
    """{sysfs read_ahead_kb file: advised KiB} of a readahead plan's device
    lines that advise a change."""
    out = {}
    for line in open(ra):
        f = line.rstrip("\n").split("\t")
        if f[0] == "device" and len(f) >= 6 and f[3] != f[2] and int(f[3]) > 0:
            out[f[4]] = int(f[3])
    return out


def set_readahead_kb(settings):
    """Writes {sysfs file: KiB}; returns the values they had."""
    old = {}
    for path, kb in settings.items():
        old[path] = int(open(path).read())
        with open(path, "w") as f:
            f.write(f"{kb}\n")
    return old


def readahead_advice(ra):
    """(files advised random, sequential, device lines) of a readahead plan."""
    files, devices = {"random": 0, "sequential": 0}, []
    for line in open(ra):
        f = line.rstrip("\n").split("\t")
        if f[0] == "file" and f[1] in files:
            files[f[1]] += 1
        elif f[0] == "device" and len(f) >= 5:
            devices.append(f"{f[1]}: {f[2]} → {f[3]} KiB")
    return files["random"], files["sequential"], devices


def run_tree_read(cmd):
    """Runs cmd; returns (wall ns, bytes the process tree read from block
    devices: wait4's ru_inblock of cmd and every descendant it waited for,
    readahead and the replayer's reads included)."""
    wall, ru, _, _ = B.run_measured(cmd)
    return wall, ru.ru_inblock * 512


def readahead(a):
    work = B.work_dir("coldstart-readahead", a.runs)
    example = os.path.join(B.BUILD, "examples", "bin", "cold_start")
    subprocess.run([example, work, "--make"], check=True, stdout=subprocess.DEVNULL)
    shim = os.path.join(B.BUILD, "cli", "libexec", "libsyspgo-readahead.so")
    programs = [("examples/cold_start (story 2)", [example, work]), ("clang-19 --version", ["clang-19", "--version"])]
    disk = disk_of("/usr/lib")
    if disk_of(work) != disk:
        raise SystemExit(f"bench: {work} is not on {disk}, the disk of /usr/lib")
    rows, verdicts = [], []
    for title, cmd in programs:
        db, plan, ra = (os.path.join(work, n) for n in ("cold.db", "app.plan", "app.ra"))
        for f in (db, plan, ra):
            if os.path.exists(f):
                os.unlink(f)
        subprocess.run([B.SYSPGO, "collect", "--cold", "--no-readahead", "--probes", "fileio,faults,pagecache", "-o",
                        db, "--"] + cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for kind, out in (("plan", plan), ("readahead", ra)):
            subprocess.run([B.SYSPGO, "optimize", db, "--emit", kind, "-o", out], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        exe = [shutil.which(cmd[0]) or cmd[0]] + cmd[1:]
        files = [p for p in listed_files(ra) if os.path.exists(p)]
        variants = {
            "cold": cmd,
            "cold+ra": [B.SYSPGO_PREFETCH, "--readahead", ra, "--"] + cmd,
            "preload": ["env", f"LD_PRELOAD={shim}", f"SYSPGO_READAHEAD={ra}"] + exe,
            "plan": [B.SYSPGO_PREFETCH, plan, "--"] + cmd,
            "plan+ra": [B.SYSPGO_PREFETCH, plan, "--readahead", ra, "--"] + cmd,
        }
        variants["ra+device"] = variants["cold+ra"]  # with the device lines applied for the run
        devices = device_advice(ra)
        wall = {v: [] for v in variants}
        read = {v: [] for v in variants}
        disk_read = {v: [] for v in variants}
        cached = {v: [] for v in variants}
        for i in range(a.runs):
            for v in (READAHEAD_VARIANTS if i % 2 == 0 else READAHEAD_VARIANTS[::-1]):
                B.drop_caches()
                s0 = disk_sectors_read(disk)
                # A file's window is taken from its device as it is opened:
                # the setting is back as soon as the run is over.
                old = set_readahead_kb(devices) if v == "ra+device" else {}
                try:
                    w, r = run_tree_read(variants[v])
                finally:
                    set_readahead_kb(old)
                wall[v].append(w)
                read[v].append(r)
                disk_read[v].append((disk_sectors_read(disk) - s0) * 512)
                cached[v].append(cached_bytes(files))
        med = {v: B.med(wall[v]) for v in wall}
        mib = {v: B.med(read[v]) / 1048576 for v in read}
        disk_mib = {v: B.med(disk_read[v]) / 1048576 for v in read}
        cached_mib = {v: B.med(cached[v]) / 1048576 for v in read}
        random_files, sequential_files, devices = readahead_advice(ra)
        rows.append([title] + [B.fmt_range(wall[v]) for v in READAHEAD_VARIANTS] +
                    [" / ".join(f"{cached_mib[v]:.1f}" for v in READAHEAD_VARIANTS),
                     " / ".join(f"{mib[v]:.1f}" for v in READAHEAD_VARIANTS),
                     " / ".join(f"{disk_mib[v]:.0f}" for v in READAHEAD_VARIANTS),
                     f"{med['cold'] / med['cold+ra']:.2f}x", f"{med['plan'] / med['plan+ra']:.2f}x",
                     f"{random_files} random, {sequential_files} sequential", "; ".join(devices) or "none"])
        # "No slower" as the noise allows: the plan + ra run is slower only
        # if even the low end of the 95% interval of the two medians' ratio
        # (rounds resampled, each round's two runs kept together) is above 1.
        slower = ratio_interval(wall["plan+ra"], wall["plan"])
        verdicts.append(
            f"- {title}: readahead plan alone reads fewer bytes than the kernel's default: "
            f"{'met' if cached_mib['cold+ra'] < cached_mib['cold'] else 'not met'} ({cached_mib['cold+ra']:.1f} vs "
            f"{cached_mib['cold']:.1f} MiB of its files read into the page cache; {mib['cold+ra']:.1f} vs "
            f"{mib['cold']:.1f} MiB read by the process tree; "
            f"{med['cold+ra'] / 1e6:.0f} vs {med['cold'] / 1e6:.0f} ms); with the prefetch plan no slower: "
            f"{'met' if slower[0] <= 1 else 'not met'} ({med['plan+ra'] / 1e6:.1f} vs {med['plan'] / 1e6:.1f} ms, "
            f"ratio {med['plan+ra'] / med['plan']:.3f}, 95% interval {slower[0]:.3f}–{slower[1]:.3f}); with its "
            "device advice applied too, fewer bytes: "
            f"{'met' if cached_mib['ra+device'] < cached_mib['cold'] else 'not met'} ({cached_mib['ra+device']:.1f} MiB, "
            f"{med['ra+device'] / 1e6:.0f} ms)")
    body = (f"Wall time, medians of {a.runs} interleaved rounds (min–max, every other round in reverse order); the "
            "page cache is dropped before every run. One cold run of each program recorded with `syspgo collect "
            "--cold --no-readahead` gives both the prefetch plan (`--emit plan`) and the readahead plan (`--emit "
            "readahead`). *cold*: the program, with the kernel's readahead (this disk's read_ahead_kb is in the "
            "last column). *cold + ra*: `syspgo-prefetch --readahead RA -- CMD` (the replayer starts the program "
            "with libsyspgo-readahead.so preloaded, which advises the plan's files as the program maps and opens "
            "them). *ra + device*: the same, with the plan's device lines applied for the run (each advised "
            "read_ahead_kb written to its sysfs file before, the old value back after). *preload*: the same advice without the replayer, `env LD_PRELOAD=libsyspgo-readahead.so "
            "SYSPGO_READAHEAD=RA CMD`, as docs/coldstart.md applies it by hand. *plan*: `syspgo-prefetch PLAN -- "
            "CMD`. *plan + ra*: `syspgo-prefetch PLAN --readahead RA -- CMD`. *MiB read*: what the run's process "
            "tree read from block devices, readahead and the replayer's reads included (wait4's "
            "ru_inblock of the whole command and its children). *disk-wide*: the disk's counter in "
            "/proc/diskstats over the same run, which on this shared machine also counts other work's reads. *MiB of "
            "its files cached*: after the run, the bytes in the page cache (fincore) of the files the readahead plan "
            "lists (every file the recorded run read or faulted on): what the kernel read of them, readahead "
            "included, since the cache was dropped before.\n\n" +
            md_table(["program", "cold", "cold + ra", "ra + device", "preload", "plan", "plan + ra",
                      "MiB of its files cached after the run: cold / cold + ra / ra + device / preload / plan / "
                      "plan + ra", "MiB read, same order", "disk-wide MiB, same order", "cold ÷ (cold + ra)",
                      "plan ÷ (plan + ra)", "files advised", "device read_ahead_kb: now → advised"], rows) +
            "\n\nKernels from 6.16 ignore MADV_RANDOM on executable mappings (mm/filemap.c, "
            "do_sync_mmap_readahead: \"VM_EXEC case below is already intended for random access\"): a fault in a "
            "library's text still reads a read_ahead_kb window around it, so the advice reaches data mappings and "
            "reads only; the device advice (not applied here: it is machine-wide) is what would cut text faults."
            "\n\n" + targets(25, verdicts, "the readahead plan alone reads fewer bytes than the kernel's default on "
                              "every program; with the prefetch plan, no slower (slower only where the whole 95% interval of the "
                              "ratio of its median to the prefetch plan's alone lies above 1: rounds resampled, the "
                              "two runs of a round kept together)."))
    publish("coldstart_readahead", a, body, "--readahead")


# ---- A container's cold start (--containers) -------------------------------

# What podman's runtime mounts over in a read-only root (issue 44): the
# image holds the mount points, and /bin/true for the floor's container.
RUNTIME_DIRS = ["proc", "sys", "dev", "tmp", "var/tmp", "run"]
RUNTIME_FILES = ["etc/hosts", "etc/resolv.conf", "etc/hostname"]
# The variants, interleaved: (name, image, the replayer's options to replay
# its plan with or None, how cold, the program or /bin/true). How cold:
# "drop", the page cache dropped; "image", only the image's pages dropped
# (podman run once, then the image unmounted and mounted again: its pages
# and metadata go with the mount and the loop device's last close), so that
# podman, conmon and runc start warm and what is left is the image's part;
# "warm", after a run.
# The plan's lookups are the paths the container's processes looked up as
# they saw them (docs/collection.md): replayed, they look up the host's
# files of those names, so the plan also runs without them.
CONTAINER_VARIANTS = [
    ("unsorted", "unsorted", None, "drop", "program"),
    ("laid out + plan", "sorted", [], "drop", "program"),
    ("laid out + plan, no lookups", "sorted", ["--no-lookups"], "drop", "program"),
    ("laid out", "sorted", None, "drop", "program"),
    ("image cold: unsorted", "unsorted", None, "image", "program"),
    ("image cold: laid out + plan", "sorted", [], "image", "program"),
    ("image cold: laid out", "sorted", None, "image", "program"),
    ("warm", "sorted", None, "warm", "program"),
    ("/bin/true, warm", "sorted", None, "warm", "true"),
    ("/bin/true, cold", "sorted", None, "drop", "true"),
]


def remount(mnt, dev):
    """Unmounts the image at mnt and mounts it again from its loop device:
    the image's pages and metadata leave the cache, nothing else does."""
    subprocess.run(["umount", mnt], check=True)
    subprocess.run(["blockdev", "--flushbufs", dev], check=True)
    subprocess.run(["mount", "-t", "erofs", "-o", "ro", dev, mnt], check=True)


class Podman:
    """podman as it runs here (issue 44): runc (crun refuses this kernel's
    hybrid cgroups), no ulimits raised (not permitted here), no network;
    every container it made is removed by remove_all, whatever failed."""

    def __init__(self, work):
        conf = os.path.join(work, "containers.conf")
        open(conf, "w").write("[containers]\ndefault_ulimits = []\n")
        os.environ["CONTAINERS_CONF"] = conf  # for every podman the bench runs, under the replayer too
        self.names = []

    def __call__(self, *args):
        p = subprocess.run(["podman", *args], capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"bench: podman {' '.join(args)} failed: {p.stderr.strip()[-1500:]}")
        return p.stdout

    def run_args(self, name, rootfs, cmd):
        """The arguments of `podman run` of cmd from rootfs, read-only, removed after."""
        self.names.append(name)
        return ["podman", "run", "--rm", "--name", name, "--runtime", "runc", "--network", "none", "--read-only",
                "--rootfs", rootfs, *cmd]

    def remove_all(self):
        for name in self.names:
            subprocess.run(["podman", "rm", "-f", "-t", "0", name], capture_output=True)


def wait_attached(db, collector):
    """Waits until the collector recording into db has attached (its run row
    has a start), as tests/test_util.cc's WaitAttached does."""
    for _ in range(1200):
        if collector.poll() is not None:
            raise SystemExit(f"bench: syspgo collect exited ({collector.returncode}) before attaching")
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
                if c.execute("SELECT COUNT(*) FROM run WHERE command_start_ts IS NOT NULL").fetchone()[0]:
                    return
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    raise SystemExit("bench: syspgo collect did not attach within 60 s")


def record_container(podman, work, rootfs, cmd):
    """Records the cold start of a container running cmd from rootfs, whole:
    the container is created and initialized first (`podman init`: the
    runtime's init process waits in the container's cgroup, in its mount
    namespace, for `podman start`), recorded with `collect --container`,
    then started after a cache drop. Returns the database."""
    db, name = os.path.join(work, "container.db"), f"syspgo-bench-{os.getpid()}-record"
    podman.names.append(name)
    podman("create", "--name", name, "--runtime", "runc", "--network", "none", "--read-only", "--rootfs", rootfs,
           *cmd)
    podman("init", name)
    B.drop_caches()
    log = open(os.path.join(work, "collect.log"), "w")
    collector = subprocess.Popen([B.SYSPGO, "collect", "--no-readahead", "--probes", "fileio,faults,pagecache",
                                  "-o", db, "--container", name, "--duration", "600"], stdout=log, stderr=log)
    try:
        wait_attached(db, collector)
        podman("start", "--attach", name)
    finally:
        collector.send_signal(signal.SIGINT)
        if collector.wait() != 0:
            raise SystemExit(f"bench: syspgo collect --container failed ({collector.returncode}); see {log.name}")
    podman("rm", name)
    return db


def container_root(work):
    """The numpy program's root directory (make_root), with what the runtime
    needs to run a container read-only from an image of it."""
    title, name, cmd, trees, example = next(p for p in image_programs(work) if p[1] == "numpy")
    root = make_root(work, name, cmd, trees, example)
    for d in RUNTIME_DIRS:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for f in RUNTIME_FILES:
        open(os.path.join(root, f), "w").close()
    add_to_root(root, "/usr/bin/true")
    return title, root, cmd


def containers(a):
    work = B.work_dir("coldstart-containers", a.runs)
    B.require("podman", "podman runc", "what runs the containers")
    B.require("mkfs.erofs", "erofs-utils", "what builds the EROFS images")
    disk = disk_of(work)
    podman, mounts = Podman(work), []
    try:
        title, root, cmd = container_root(work)
        db = record_container(podman, work, root, cmd)
        images = {"unsorted": os.path.join(work, "unsorted.img"), "sorted": os.path.join(work, "sorted.img")}
        subprocess.run(["mkfs.erofs", "--quiet", images["unsorted"], root], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([B.SYSPGO, "optimize", db, "--emit", "erofs", "--source-dir", root, "-o", images["sorted"],
                        "--json", images["sorted"] + ".json"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        at, device = {}, {}
        for img, path in images.items():
            at[img] = os.path.join(work, img + ".mnt")
            mounts.append((at[img], loop_mount(path, at[img], "erofs")))
            device[img] = mounts[-1][1]
        plan = os.path.join(work, "sorted.plan")
        subprocess.run([B.SYSPGO, "optimize", db, "--emit", "plan", "--relocate", f"{root}={at['sorted']}", "-o",
                        plan], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shown = json.loads(subprocess.run([B.SYSPGO, "plan-show", plan, "--json"], check=True, capture_output=True,
                                          text=True).stdout)
        layout = B.read_json(images["sorted"] + ".json")
        wall = {v[0]: [] for v in CONTAINER_VARIANTS}
        read = {v[0]: [] for v in CONTAINER_VARIANTS}
        for i in range(a.runs):
            order = list(enumerate(CONTAINER_VARIANTS))
            for k, (name, img, replay, cold, what) in (order if i % 2 == 0 else order[::-1]):
                inner = cmd if what == "program" else ["/usr/bin/true"]
                argv = lambda tag: podman.run_args(f"syspgo-bench-{os.getpid()}-{i}-{k}{tag}", at[img], inner)
                if cold == "drop":
                    B.drop_caches()
                else:
                    run_variant(argv("-warmup"))
                if cold == "image":
                    remount(at[img], device[img])
                prefix = [] if replay is None else [B.SYSPGO_PREFETCH, plan, *PLAN_OPTIONS["erofs.sorted"], *replay,
                                                    "--"]
                s0 = disk_sectors_read(disk)
                wall[name].append(run_variant(prefix + argv("")))
                read[name].append((disk_sectors_read(disk) - s0) * 512)
    finally:
        podman.remove_all()
        for mnt, dev in reversed(mounts):
            subprocess.run(["umount", mnt])
            subprocess.run(["losetup", "-d", dev])
    publish("coldstart_container", a, container_body(a, title, cmd, wall, read, shown, layout, images), "--containers")


def container_body(a, title, cmd, wall, read, shown, layout, images):
    """The section's text, from the measurements."""
    med = {v: B.med(wall[v]) for v in wall}
    ms = lambda ns: f"{ns / 1e6:.0f} ms"
    rows = [[v, B.fmt_range(wall[v]), f"{B.med(read[v]) / 1048576:.1f}", f"{med[v] / med['warm']:.2f}x"]
            for v in wall]
    lo, hi = ratio_interval(wall["unsorted"], wall["laid out + plan"])
    lo_alone, hi_alone = ratio_interval(wall["unsorted"], wall["laid out"])
    lo_nl, hi_nl = ratio_interval(wall["unsorted"], wall["laid out + plan, no lookups"])
    ic = "image cold: "
    lo_ic, hi_ic = ratio_interval(wall[ic + "unsorted"], wall[ic + "laid out + plan"])
    lo_ica, hi_ica = ratio_interval(wall[ic + "unsorted"], wall[ic + "laid out"])
    plan_bytes = sum(e["length"] for f in shown["files"] for e in f["extents"])
    return (f"A container running `{' '.join(cmd)}` ({title}) from a root directory of Debian's files (the files a "
            "cold run of it on this host touched, plus /usr/lib/python3.11 and numpy whole, and /bin/true), started "
            "by podman 4 with runc: `podman run --rm --read-only --network none --rootfs MOUNT CMD`, MOUNT an EROFS "
            "image of that directory loop-mounted read-only with direct I/O on the same disk. The recording: "
            "`podman create` and `podman init` (the runtime's init process waits in the container's cgroup), "
            "`syspgo collect --no-readahead --container NAME`, a cache drop, `podman start --attach NAME`: the "
            "container's whole start, from its first exec, in its cgroup. From it, *laid out*: `syspgo optimize "
            "DB --emit erofs --source-dir ROOT` (the pages the start touched first, in replay order); "
            "*unsorted*: `mkfs.erofs IMG ROOT`; the plan: `syspgo optimize DB --emit plan --relocate ROOT=MOUNT` "
            f"({len(shown['files'])} files, {plan_bytes / 1048576:.1f} MiB, {len(shown.get('lookups', []))} paths "
            f"to look up), replayed as `syspgo-prefetch PLAN {' '.join(PLAN_OPTIONS['erofs.sorted'])} -- podman run "
            "...`; *no lookups*: with `--no-lookups` too (the plan's lookups are the paths as the container saw "
            "them, which the replayer looks up on the host). Image sizes: unsorted "
            f"{os.path.getsize(images['unsorted']) / 1048576:.0f} MiB, laid out "
            f"{os.path.getsize(images['sorted']) / 1048576:.0f} MiB ({layout['files_placed']} files placed "
            "first).\n\n"
            f"Wall time of `podman run` (and the replay), medians of {a.runs} interleaved rounds (min–max, every "
            "other round in reverse order); the first four rows and the last are cold: the page cache dropped "
            "(`echo 3 > drop_caches`) before the run, podman's own files included. *image cold*: podman run once, "
            "then the image unmounted, its loop device's buffers flushed, and mounted again: only the image's "
            "pages and metadata are cold, podman, conmon and runc start warm. *warm*: the same container again "
            "after a run. */bin/true*: a container "
            "running /bin/true from the laid-out image: podman's own start, the floor of every row. *MiB read*: "
            "the disk's counter in /proc/diskstats over the run (podman's, the runtime's and the image's reads; "
            "other work on this shared machine counts too).\n\n" +
            md_table(["variant", "wall", "MiB read from disk", "÷ warm"], rows) + "\n\n"
            f"Laid out + plan against unsorted, cold: {med['unsorted'] / med['laid out + plan']:.2f}x faster "
            f"({ms(med['unsorted'])} → {ms(med['laid out + plan'])}; 95% bootstrap interval of the ratio of "
            f"medians {lo:.2f}–{hi:.2f}, rounds resampled). Laid out alone: {med['unsorted'] / med['laid out']:.2f}x "
            f"({lo_alone:.2f}–{hi_alone:.2f}). Laid out + plan, no lookups: "
            f"{med['unsorted'] / med['laid out + plan, no lookups']:.2f}x ({lo_nl:.2f}–{hi_nl:.2f}). Image cold, "
            f"laid out + plan against unsorted: {med[ic + 'unsorted'] / med[ic + 'laid out + plan']:.2f}x "
            f"({ms(med[ic + 'unsorted'])} → {ms(med[ic + 'laid out + plan'])}; {lo_ic:.2f}–{hi_ic:.2f}); laid out "
            f"alone {med[ic + 'unsorted'] / med[ic + 'laid out']:.2f}x ({lo_ica:.2f}–{hi_ica:.2f}). Above podman's "
            f"own cold start (/bin/true, cold, "
            f"{ms(med['/bin/true, cold'])}): unsorted {ms(med['unsorted'] - med['/bin/true, cold'])}, laid out + "
            f"plan {ms(med['laid out + plan'] - med['/bin/true, cold'])}.\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--images", action="store_true", help="measure images in first-touch order (issue 25)")
    mode.add_argument("--readahead", action="store_true", help="measure readahead plans (issue 25)")
    mode.add_argument("--containers", action="store_true", help="measure a container's cold start (issue 44)")
    a = ap.parse_args()
    if a.containers:
        return containers(a)
    if a.images:
        return images(a)
    if a.readahead:
        return readahead(a)
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
            f"{'met' if B.med(read['plan']) <= 1.1 * cold_read else 'not met'}; "
            f"`syspgo prefetch` ÷ `syspgo-prefetch`: {med['syspgo'] / med['plan']:.3f} (issue 25: within 5%, "
            f"{'met' if med['syspgo'] <= 1.05 * med['plan'] else 'not met'}; MiB read from disk, replay and "
            f"program: {B.med(read['syspgo']) / 1048576:.1f} vs {B.med(read['plan']) / 1048576:.1f})")
    body = (f"Wall time of prefetch + program, medians of {a.runs} interleaved rounds (min–max); the page cache is "
            "dropped before every cold, whole and plan run.\n\n" +
            md_table(["program", "cold", "whole-file prefetch", "plan (syspgo-prefetch)", "plan, bare",
                      "plan, 16 MiB lead", "plan (syspgo prefetch)", "warm", "floor: plan's extents",
                      "floor: contiguous", "replayer start", "plan ÷ warm", "whole ÷ plan", "cold ÷ plan",
                      "bare ÷ plan", "lookups", "program's own reads, major faults: plan / bare",
                      "MiB read from disk: cold / whole / plan", "plan size"], rows) +
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
            "the replay was reading, and was retried, counts as major too.\n\n" +
            targets(7, verdicts, "plan within 2x of warm, at least 2x faster than whole-file prefetch, at least 4x "
                    "faster than cold, reading no more than cold + 10%. Plan = the syspgo-prefetch column.") + "\n"
            f"Warmed ahead of time: the page cache is dropped, `syspgo-prefetch PLAN` runs alone (with `--hold`, or "
            f"not), then {AHEAD_WAIT} s later the program; {AHEAD_RUNS} runs of each, interleaved. DAMON's proactive "
            f"pageout schemes in force, as the replays reported them: {'; '.join(sorted(damon)) or 'none'}.\n\n" +
            md_table(["program", "runs in which the program read from disk: no hold / --hold",
                      "most KiB it read: no hold / --hold",
                      "program's wall time, median (min–max): no hold / --hold"], ahead_rows) + "\n")
    publish("coldstart", a, body)


if __name__ == "__main__":
    main()
