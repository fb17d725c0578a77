#!/usr/bin/python3
# ===- checkpoint_stall.py - the checkpoint stall, as a numpy training loop -===#
# The Python twin of checkpoint_stall.cc, because most training loops that
# stall on checkpoints are Python: the same options, the same steps (a dense
# numpy matmul until the step's time budget is spent), the same synchronous
# checkpoint on the main thread (os.write in 1 MiB chunks, os.fsync, unlink)
# and the same output lines. The profiler sees the interpreter's frames and
# the BLAS library rather than TrainStep/MatMul, but the off-CPU stall, the
# file and the syscalls are identical, which is what `syspgo analyze stalls`
# must find whatever language the user wrote the loop in.
# ===-----------------------------------------------------------------------===#
import argparse
import os
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("checkpoint_stall.py: numpy is missing; install Debian's python3-numpy "
             "(apt-get install python3-numpy)")

CHUNK = 1 << 20  # bytes per write(), as in the C++ version
DIM = 160        # one matmul is short, so a step stops close to its budget


def count(name, limit):
    """An argparse type: a whole number from 1 to limit, with a clear error."""
    def parse(text):
        try:
            value = int(text, 10)
        except ValueError:
            value = 0
        if not 1 <= value <= limit:
            raise argparse.ArgumentTypeError(
                f"{name} wants a whole number from 1 to {limit}, not '{text}'")
        return value
    return parse


def parse_options(argv):
    p = argparse.ArgumentParser(
        prog="checkpoint_stall.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A training-like loop: each step a dense matmul, every PERIOD-th\n"
                    "step a synchronous checkpoint (write in 1 MiB chunks, fsync,\n"
                    "unlink) into DIR.",
        epilog="example: checkpoint_stall.py --steps 10 --period 5 --mb 50 "
               "--step-ms 100 /var/tmp")
    p.add_argument("--steps", metavar="N", type=count("--steps", 100000), default=20,
                   help="training steps to run (default 20)")
    p.add_argument("--period", metavar="N", type=count("--period", 100000), default=5,
                   help="checkpoint every N-th step (default 5)")
    p.add_argument("--mb", metavar="N", type=count("--mb", 16384), default=50,
                   help="checkpoint size in MiB (default 50)")
    p.add_argument("--step-ms", metavar="N", type=count("--step-ms", 600000), default=500,
                   help="matmul time per step in ms (default 500)")
    p.add_argument("--dir", dest="dir_opt", metavar="DIR",
                   help="where checkpoints go (or DIR as the last argument); use a "
                        "disk-backed directory: on tmpfs fsync costs nothing")
    p.add_argument("dir", nargs="?", metavar="DIR", help=argparse.SUPPRESS)
    o = p.parse_args(argv)
    if o.dir and o.dir_opt and o.dir != o.dir_opt:
        p.error(f"one directory only, got '{o.dir_opt}' and '{o.dir}'")
    o.dir = o.dir or o.dir_opt
    if not o.dir:
        p.error("no checkpoint directory given")
    # Fail before the first step, not at the first checkpoint minutes later.
    if not os.path.isdir(o.dir) or not os.access(o.dir, os.W_OK):
        p.error(f"'{o.dir}' is not a writable directory")
    return o


def train_step(weights, x, step_ms):
    """Multiplies until the budget is spent; the output scaled back to at most 1
    (a power iteration) is the next input, so values never turn denormal."""
    t0 = time.monotonic()
    budget = step_ms / 1000.0
    while True:
        y = weights @ x
        peak = float(np.abs(y).max())
        x = y / peak if peak > 0 else y
        if time.monotonic() - t0 >= budget:
            return x


def write_checkpoint(path, state):
    """The stall under study: the whole state written synchronously on the
    training thread and made durable with fsync before training goes on."""
    view = memoryview(state).cast("B")
    fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | os.O_CLOEXEC, 0o644)
    try:
        t0 = time.monotonic()
        off = 0
        while off < len(view):
            off += os.write(fd, view[off:off + CHUNK])
        write_ms = (time.monotonic() - t0) * 1000
        t1 = time.monotonic()
        os.fsync(fd)
        fsync_ms = (time.monotonic() - t1) * 1000
    except OSError as e:
        os.close(fd)
        os.unlink(path)
        sys.exit(f"checkpoint_stall.py: writing checkpoint {path} failed: {e.strerror}")
    os.close(fd)
    return write_ms, fsync_ms


def main(argv):
    o = parse_options(argv)
    i = np.arange(DIM * DIM, dtype=np.uint64)
    weights = ((i * 7919 % 1000) / 1000.0 - 0.5).astype(np.float32).reshape(DIM, DIM)
    x = ((i * 104729 % 1000) / 1000.0).astype(np.float32).reshape(DIM, DIM)
    # The model's state, built once so the checkpoint step costs only the I/O.
    # A 1 MiB pattern repeated: the same bytes as the C++ version's state.
    pattern = ((np.arange(CHUNK, dtype=np.uint64) * 2654435761 % (1 << 32)) >> 24).astype(np.uint8)
    state = np.tile(pattern, o.mb)

    print(f"checkpoint_stall: {o.steps} steps of {o.step_ms} ms compute, a {o.mb} MiB "
          f"checkpoint into {o.dir} every {o.period} steps", flush=True)
    plain, ckpt = [], []
    for step in range(1, o.steps + 1):
        t0 = time.monotonic()
        x = train_step(weights, x, o.step_ms)
        compute_ms = (time.monotonic() - t0) * 1000
        if step % o.period != 0:
            ms = (time.monotonic() - t0) * 1000
            print(f"step {step}/{o.steps}: {ms:.1f} ms (compute {compute_ms:.1f} ms)", flush=True)
            plain.append(ms)
            continue
        path = os.path.join(o.dir, f"checkpoint-step{step}.bin")
        try:
            write_ms, fsync_ms = write_checkpoint(path, state)
        except OSError as e:
            sys.exit(f"checkpoint_stall.py: cannot create checkpoint {path}: {e.strerror}")
        try:
            os.unlink(path)
        except OSError as e:
            print(f"checkpoint_stall.py: cannot remove {path}: {e.strerror}", file=sys.stderr)
        ms = (time.monotonic() - t0) * 1000
        print(f"step {step}/{o.steps}: {ms:.1f} ms (compute {compute_ms:.1f} ms, checkpoint "
              f"{ms - compute_ms:.1f} ms: write {o.mb} MiB {write_ms:.1f} ms, fsync "
              f"{fsync_ms:.1f} ms, {path})", flush=True)
        ckpt.append(ms)

    mean = lambda v: sum(v) / len(v) if v else 0.0
    print(f"checkpoint_stall: mean step {mean(plain):.1f} ms without a checkpoint, "
          f"{mean(ckpt):.1f} ms with one (checksum {float(x.sum()):g})", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
