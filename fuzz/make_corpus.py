#!/usr/bin/env python3
"""make_corpus.py - writes the seed corpora in fuzz/corpus/<target>/.

Seeds are small, valid inputs (and a few near misses) that show libFuzzer
the shape of each format, so it mutates from inside it rather than
rediscovering magic numbers. They are committed; rerun this script (no
arguments) after a format changes. Only the standard library is used: the
plan's and pprof's protobufs are encoded by hand (schemas/prefetch_plan.proto,
schemas/pprof_profile.proto, pprof files gzipped with the gzip module), and the
databases are made with the sqlite3 module from the frozen schema, with
512-byte pages to keep them small, and named *.sqlite: .gitignore leaves
out *.db. The EROFS images are made by mkfs.erofs (erofs-utils), with a
fixed time and UUID so that the same tree makes the same bytes.
"""
import gzip
import os
import sqlite3
import struct
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PAGE = 4096


# ---- prefetch plans: header + syspgo.PrefetchPlan ----------------------------

def varint(v):
    v &= (1 << 64) - 1  # int64 fields are two's complement on the wire
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, b):
    return varint(num << 3 | 2) + varint(len(b)) + b


def field_fixed64(num, v):
    return varint(num << 3 | 1) + struct.pack("<Q", v)


def extent(offset, length, ts):
    return field_varint(1, offset) + field_varint(2, length) + field_varint(3, ts)


def plan_file(path, size, extents, ino=1000, dev=2049, mtime=1700000000123456789, checksum=0x1234ABCD5678EF90):
    body = b"".join(field_bytes(1, extent(*e)) for e in extents)
    body += field_bytes(2, path.encode()) + field_varint(3, size) + field_varint(4, mtime)
    body += field_varint(5, ino) + field_varint(6, dev) + field_fixed64(7, checksum)
    return body


def payload(files, run_ids=(1,), merged=1):
    """The syspgo.PrefetchPlan message alone (what fuzz_plan_replay takes)."""
    creation = field_bytes(1, b"0.1.0") + field_bytes(2, b"seedhost")
    creation += field_bytes(3, b"".join(varint(r) for r in run_ids)) + field_varint(4, merged)
    out = field_varint(1, 1) + field_bytes(2, creation)
    return out + b"".join(field_bytes(3, plan_file(*f)) for f in files)


def plan(files, run_ids=(1,), merged=1):
    payload_bytes = payload(files, run_ids, merged)
    h = 0xCBF29CE484222325
    for byte in payload_bytes:
        h = ((h ^ byte) * 0x100000001B3) & ((1 << 64) - 1)
    return b"SYSPGOPF" + struct.pack("<IIQQ", 1, 0, len(payload_bytes), h) + payload_bytes


def plan_seeds():
    one = plan([("/usr/lib/app/libapp.so", 3 * PAGE + 10, [(0, PAGE, 100), (2 * PAGE, 2 * PAGE, 900)])])
    three = plan([
        ("/srv/a.bin", 64 * PAGE, [(0, 4 * PAGE, 0), (32 * PAGE, PAGE, 5000)], 11),
        ("/srv/b.bin", 8 * PAGE, [(PAGE, PAGE, 10), (0, PAGE, 20)], 12),
        ("/srv/c.bin", PAGE, [(0, PAGE, 3000)], 13),
    ], run_ids=(3, 7), merged=2)
    return {
        "one_file.plan": one,
        "three_files_merged.plan": three,
        "empty.plan": plan([]),
        "truncated_header.plan": one[:20],
    }


# Plans for fuzz_plan_replay: the message alone. A file's last path component
# names the real file it is pointed at (fuzz/plan_replay_input.cc), and inode
# 0 asks for that file's real fingerprint, so that its extents are read.
HUGE = 1 << 62


def plan_replay_seeds():
    every_kind = [("/t/pages", 0, [(0, PAGE, 1), (2 * PAGE, 2 * PAGE, 9)], 0)]
    every_kind += [("/t/" + name, 2 * PAGE, [(0, 2 * PAGE, 2 + i)], 50 + i)
                   for i, name in enumerate(["dir", "fifo", "missing", "null", "sock"])]
    every_kind += [("/t/short", 0, [(5 * PAGE, PAGE, 8)], 0), ("/t/x/empty", 0, [(0, PAGE, 8)], 0)]
    return {
        # One extent of 2^62 bytes over a 6-byte file.
        "huge_extent_short.pb": payload([("/t/short", 0, [(0, HUGE, 5)], 0)]),
        # The same size claimed for the file: it is skipped as changed.
        "claimed_huge_size.pb": payload([("/t/pages", HUGE, [(PAGE, HUGE, 5)], 7)], run_ids=(1 << 20,), merged=5),
        # Row 8: a FIFO, a directory, a socket, a device, beside regular files.
        "every_kind.pb": payload(every_kind, run_ids=(3 * PAGE,), merged=6),
        "one_file.pb": plan_seeds()["one_file.plan"][32:],
        "three_files_merged.pb": plan_seeds()["three_files_merged.plan"][32:],
    }


# ---- profile databases -------------------------------------------------------

# The run columns tests/data/files_fixture.sql gives values.
FIXTURE_RUN_COLUMNS = ("id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version, "
                       "start_realtime_ns, start_monotonic_ns, status, end_ts")


def make_db(path, journal_mode, extra_sql=""):
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size = 512")
    db.executescript(open(os.path.join(ROOT, "schemas", "frozen", "profile_v1.sql")).read())
    # The fixture is the current schema's, whose run has no settings_json
    # (NOT NULL without a default before version 5): its runs go into a
    # temporary table in run's place, then into run with '{}', the
    # defaults, as the fixture leaves the settings at theirs.
    db.executescript("CREATE TEMP TABLE run AS SELECT * FROM main.run WHERE 0;")
    db.executescript(open(os.path.join(ROOT, "tests", "data", "files_fixture.sql")).read())
    db.executescript(f"INSERT INTO main.run ({FIXTURE_RUN_COLUMNS}, settings_json) "
                     f"SELECT {FIXTURE_RUN_COLUMNS}, '{{}}' FROM temp.run; DROP TABLE temp.run;")
    db.executescript(extra_sql)
    db.commit()
    db.execute("VACUUM")
    db.execute(f"PRAGMA journal_mode = {journal_mode}")
    db.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)


def db_seeds(out):
    make_db(os.path.join(out, "fixture.sqlite"), "DELETE")
    # WAL mode in the header, as collect leaves it.
    make_db(os.path.join(out, "fixture_wal.sqlite"), "WAL")
    # A run still marked running by a collector that is gone.
    make_db(os.path.join(out, "running.sqlite"), "DELETE",
            "UPDATE run SET status = 'running', end_ts = NULL, collector_pid = 999999, boot_id = 'x' WHERE id = 2;")
    # Schemas OpenProfileDb must refuse: file_io as a view
    # over an endless recursive query, a trigger, a virtual table.
    make_db(os.path.join(out, "view_file_io.sqlite"), "DELETE",
            "DROP TABLE file_io; CREATE VIEW file_io AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 "
            "FROM r) SELECT 1 AS run_id, n AS ts, 1 AS dur, 100 AS pid, 100 AS tid, 0 AS nr, 3 AS fd, 2049 AS dev, "
            "n AS ino, 32768 AS kind, 0 AS pos, 1 AS req, 1 AS ret FROM r;")
    make_db(os.path.join(out, "trigger.sqlite"), "DELETE",
            "CREATE TRIGGER t AFTER INSERT ON run BEGIN DELETE FROM file; END;")
    make_db(os.path.join(out, "virtual_table.sqlite"), "DELETE", "CREATE VIRTUAL TABLE v USING fts5(x);")


def frames(*addrs):
    return struct.pack(f"<{len(addrs)}Q", *addrs)


# CPU samples of one process: a user stack through two mappings, a kernel
# stack named by a small kallsyms table, and a sample with no stacks.
CPU_SQL = """
INSERT INTO mapping (run_id, ts, pid, vm_start, vm_end, file_off, dev, ino, path, build_id) VALUES
  (1, 0, 100, 4194304, 4202496, 0, 2049, 11, '/usr/bin/app', '0123456789abcdef0123456789abcdef01234567'),
  (1, 5, 100, 140000000000, 140000004096, 8192, 2049, 12, '/usr/lib/libc.so.6', NULL),
  (1, 9, 100, 140000008192, 140000012288, 0, 0, 0, '', NULL);
INSERT INTO kallsyms (hash, size, text) VALUES
  ('00000000000000aa', 96, 'ffffffff81000000 T _stext
ffffffff81000100 t do_sys_read
ffffffff81000200 T vfs_read	[ext4]
');
INSERT INTO run_kallsyms (run_id, hash) VALUES (1, '00000000000000aa');
"""


def cpu_seeds(out):
    for name, kernel in (("samples.sqlite", True), ("user_only.sqlite", False)):
        path = os.path.join(out, name)
        make_db(path, "DELETE", CPU_SQL)
        db = sqlite3.connect(path)
        db.execute("INSERT INTO stack (run_id, id, frames) VALUES (1, 1, ?)",
                   (frames(4194400, 140000000100, 4194500),))
        db.execute("INSERT INTO stack (run_id, id, frames) VALUES (1, 2, ?)",
                   (frames(0xFFFFFFFF81000210, 0xFFFFFFFF81000120),))
        rows = [(1, 10 * i, 100, 100, i % 2, int(kernel and i % 3 == 0), 4194400 + i, 1 if i % 4 else 0,
                 2 if kernel and i % 3 == 0 else 0) for i in range(12)]
        db.executemany("INSERT INTO cpu_sample (run_id, ts, pid, tid, cpu, kernel, ip, user_stack_id, "
                       "kernel_stack_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.commit()
        db.execute("VACUUM")
        db.close()


# ---- pprof profiles: perftools.profiles.Profile, gzipped or not ---------------

def pprof(strings, sample_types, samples, mappings, locations, functions, period=(3, 4, 1000000)):
    """A Profile message. sample_types: (type, unit) string indices; samples:
    (location ids, values, labels as (key, num, str)); mappings: (id, start,
    limit, offset, file, build_id); locations: (id, mapping, address,
    function ids); functions: (id, name)."""
    out = b""
    for t, u in sample_types:
        out += field_bytes(1, field_varint(1, t) + field_varint(2, u))
    for locs, values, labels in samples:
        body = b"".join(field_varint(1, l) for l in locs) + b"".join(field_varint(2, v) for v in values)
        for key, num, text in labels:
            body += field_bytes(3, field_varint(1, key) + (field_varint(3, num) if num else b"") +
                                (field_varint(2, text) if text else b""))
        out += field_bytes(2, body)
    for mid, start, limit, offset, file, build_id in mappings:
        out += field_bytes(3, field_varint(1, mid) + field_varint(2, start) + field_varint(3, limit) +
                           field_varint(4, offset) + field_varint(5, file) + field_varint(6, build_id))
    for lid, mapping, address, fns in locations:
        out += field_bytes(4, field_varint(1, lid) + field_varint(2, mapping) + field_varint(3, address) +
                           b"".join(field_bytes(4, field_varint(1, f) + field_varint(2, 10)) for f in fns))
    for fid, name in functions:
        out += field_bytes(5, field_varint(1, fid) + field_varint(2, name) + field_varint(3, name))
    for text in strings:
        out += field_bytes(6, text.encode())
    ptype, punit, p = period
    out += field_bytes(11, field_varint(1, ptype) + field_varint(2, punit)) + field_varint(12, p)
    return out + field_varint(14, 3)


def pprof_seeds():
    strings = ["", "samples", "count", "cpu", "nanoseconds", "off_cpu", "/usr/bin/app",
               "4a5a9b0affb66c437abcd455d2738af879985fa9", "[kernel.kallsyms]", "main", "hot", "__schedule", "pid",
               "comm", "app"]
    mappings = [(1, 0x401000, 0x402000, 0x1000, 6, 7), (2, 0xFFFFFFFF81000000, 0xFFFFFFFF82000000, 0, 8, 7)]
    locations = [(1, 1, 0x401120, [10]), (2, 1, 0x401053, [9]), (3, 2, 0xFFFFFFFF81000210, [11]),
                 (4, 2, 0xFFFFFFFF81000120, [11])]
    functions = [(9, 9), (10, 10), (11, 11)]  # ids equal to their name's string index
    labels = [(12, 100, 0), (13, 0, 14)]
    full = pprof(strings, [(1, 2), (3, 4), (5, 4)],
                 [([1, 2], [7, 7000000, 0], labels), ([3, 4, 1, 2], [2, 2000000, 0], labels),
                  ([3, 2], [0, 0, 5000000], labels)], mappings, locations, functions)
    ns_only = pprof(strings, [(3, 4)], [([1, 2], [3000000], [])], mappings, locations, functions)
    no_addresses = pprof(strings, [(1, 2), (3, 4)], [([1, 2], [4, 4000000], [])], mappings,
                         [(lid, m, 0, f) for lid, m, _, f in locations], functions)
    half = len(full) // 2
    return {
        "cpu_offcpu_kernel.pb.gz": gzip.compress(full, mtime=0),
        "cpu_nanoseconds_only.pb": ns_only,
        "names_only.pb.gz": gzip.compress(no_addresses, mtime=0),
        # Two gzip members, as concatenated .gz files are: one profile.
        "two_members.pb.gz": gzip.compress(full[:half], mtime=0) + gzip.compress(full[half:], mtime=0),
    }


# ---- EROFS images: fuzz/erofs_image_input.cc lays them out -------------------

# Each layout mkfs.erofs makes that LayOutErofsImage meets: the two it moves
# blocks of, and two it refuses or leaves in place.
EROFS_SEEDS = {
    "chunked.erofs": ["--chunksize=4096"],
    "lz4hc-full-index.erofs": ["-zlz4hc", "-Elegacy-compress"],
    "lz4hc-compact.erofs": ["-zlz4hc"],
    "flat.erofs": [],
}


def erofs_seeds(out):
    """The tree the target's plan names (/r/a.txt, /r/lib/b.txt), made into
    an image each way."""
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "r")
        os.makedirs(os.path.join(root, "lib"))
        with open(os.path.join(root, "a.txt"), "w") as f:
            f.write("".join(f"{i}\n" for i in range(1, 3001)))
        with open(os.path.join(root, "lib", "b.txt"), "w") as f:
            f.write("".join(f"{i}\n" for i in range(7000, 7400)))
        for name, options in EROFS_SEEDS.items():
            subprocess.run(["mkfs.erofs", "--quiet", "-T0", "-U", "6e6f6e65-0000-4000-8000-000000000001", *options,
                            os.path.join(out, name), root], check=True)


def main():
    plans = os.path.join(HERE, "corpus", "plan")
    replays = os.path.join(HERE, "corpus", "plan_replay")
    dbs = os.path.join(HERE, "corpus", "profile_db")
    cpu = os.path.join(HERE, "corpus", "cpu_samples")
    pp = os.path.join(HERE, "corpus", "pprof")
    erofs = os.path.join(HERE, "corpus", "erofs_image")
    for d in (plans, replays, dbs, cpu, pp, erofs):
        os.makedirs(d, exist_ok=True)
    for d, seeds in ((plans, plan_seeds()), (replays, plan_replay_seeds())):
        for name, data in seeds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    db_seeds(dbs)
    cpu_seeds(cpu)
    for name, data in pprof_seeds().items():
        with open(os.path.join(pp, name), "wb") as f:
            f.write(data)
    erofs_seeds(erofs)
    for d in (plans, replays, dbs, cpu, pp, erofs):
        for name in sorted(os.listdir(d)):
            print(f"{os.path.relpath(os.path.join(d, name), ROOT)}: {os.path.getsize(os.path.join(d, name))} bytes")


if __name__ == "__main__":
    main()
