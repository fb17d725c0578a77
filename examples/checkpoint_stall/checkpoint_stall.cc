//===- checkpoint_stall.cc - a training loop stalled by its checkpoints ---===//
// The checkpoint-stall story as a program: a training-like loop whose steps are a
// dense matrix multiplication, and every Nth step a synchronous checkpoint
// (write() in 1 MiB chunks, fsync(), unlink) on the main thread. The step
// that checkpoints is slower by the time the checkpoint takes, and nothing in
// the program's own CPU profile says why: the thread is in the kernel, copying
// into the page cache and then off-CPU in fsync waiting for the disk.
// That is the stall `syspgo analyze run.db stalls` must attribute to the
// checkpoint file, its size, its latency and its period.
//
// With --random the checkpoint is the seed scenario's instead: a fresh
// buffer filled with random bytes from the kernel (getrandom), written in
// one write() and not synced. The thread then never waits: it pauses on a
// CPU in the kernel, generating the bytes and copying them into the page
// cache, a stall no off-CPU interval shows. --sleep-ms ends each step with
// a sleep, as the seed's loop does. The program prints
// each step's duration so that a person sees the stall without any tool.
//
// Functions on the interesting paths are kept out of line so that the stacks
// the profiler records (frame pointers) read main -> TrainStep -> MatMul and
// main -> WriteCheckpoint -> write/fsync.
//===----------------------------------------------------------------------===//
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "example_cli.h"

namespace {

using example::Die;
using example::ParseCount;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string dir;
  long steps = 20;    // training steps to run
  long period = 5;    // checkpoint on every period-th step
  long mb = 50;       // checkpoint size in MiB
  long step_ms = 500; // compute time per step in ms
  long sleep_ms = 0;  // sleep at the end of each step in ms
  bool random = false;  // the seed's checkpoint: random bytes, one write, no fsync
};

constexpr long kChunk = 1 << 20;  // bytes per write(), as a framework's buffered writer would
constexpr int kDim = 160;         // one matmul is ~4 M multiply-adds: fine-grained enough to stop on time

void Usage(FILE* out) {
  fprintf(out,
          "usage: checkpoint_stall [options] DIR\n"
          "A training-like loop: each step a dense matmul, every PERIOD-th step a\n"
          "synchronous checkpoint (write in 1 MiB chunks, fsync, unlink) into DIR.\n"
          "\n"
          "  --steps N     training steps to run              (default 20, 1..100000)\n"
          "  --period N    checkpoint every N-th step          (default 5, 1..100000)\n"
          "  --mb N        checkpoint size in MiB              (default 50, 1..16384)\n"
          "  --step-ms N   matmul time per step in ms          (default 500, 1..600000)\n"
          "  --sleep-ms N  sleep at the end of each step in ms (default 0, 0..600000)\n"
          "  --random      checkpoint random bytes (getrandom) in one write, no fsync\n"
          "  --dir DIR     where checkpoints go (or DIR as the last argument);\n"
          "                use a disk-backed directory: on tmpfs fsync costs nothing\n"
          "\n"
          "example: checkpoint_stall --steps 10 --period 5 --mb 50 --step-ms 100 /var/tmp\n");
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  example::ForEachArg(argc, argv, Usage, {"--random"}, [&](std::string_view name, std::string_view value) {
    if (name.empty()) {
      if (!o.dir.empty()) Die("one directory only, got '%s' and '%.*s'", o.dir.c_str(), static_cast<int>(value.size()),
                              value.data());
      o.dir = value;
    } else if (name == "--steps") {
      o.steps = ParseCount(name, value, 1, 100000);
    } else if (name == "--period") {
      o.period = ParseCount(name, value, 1, 100000);
    } else if (name == "--mb") {
      o.mb = ParseCount(name, value, 1, 16384);
    } else if (name == "--step-ms") {
      o.step_ms = ParseCount(name, value, 1, 600000);
    } else if (name == "--sleep-ms") {
      o.sleep_ms = ParseCount(name, value, 0, 600000);
    } else if (name == "--random") {
      if (!value.empty()) Die("--random takes no value");
      o.random = true;
    } else if (name == "--dir") {
      o.dir = value;
    } else {
      Die("unknown option '%.*s'", static_cast<int>(name.size()), name.data());
    }
  });
  if (o.dir.empty()) Die("no checkpoint directory given");
  // Fail before the first step, not at the first checkpoint minutes later.
  struct stat sb {};
  if (stat(o.dir.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode) || access(o.dir.c_str(), W_OK) != 0)
    Die("'%s' is not a writable directory", o.dir.c_str());
  return o;
}

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// c = a * b for kDim x kDim row-major matrices; i-k-j order so the inner loop
// streams rows and vectorizes, like the kernels a framework would call.
__attribute__((noinline)) void MatMul(const float* a, const float* b, float* c) {
  for (int i = 0; i < kDim * kDim; ++i) c[i] = 0.0f;
  for (int i = 0; i < kDim; ++i)
    for (int k = 0; k < kDim; ++k) {
      float aik = a[i * kDim + k];
      for (int j = 0; j < kDim; ++j) c[i * kDim + j] += aik * b[k * kDim + j];
    }
}

struct Model {
  std::vector<float> weights, input, output;
};

// One step's compute: multiply until the step's time budget is spent, so the
// step length is the option's and not this machine's speed. The output,
// scaled back to at most 1 (a power iteration), becomes the next input: every
// multiplication stays live and the values never drift into denormals, which
// would make later steps slower than earlier ones.
__attribute__((noinline)) void TrainStep(Model& m, long step_ms) {
  auto t0 = Clock::now();
  auto budget = std::chrono::milliseconds(step_ms);
  do {
    MatMul(m.weights.data(), m.input.data(), m.output.data());
    float peak = 0;
    for (float v : m.output) peak = std::max(peak, std::abs(v));
    float scale = peak > 0 ? 1.0f / peak : 1.0f;
    for (size_t i = 0; i < m.input.size(); ++i) m.input[i] = m.output[i] * scale;
  } while (Clock::now() - t0 < budget);
}

struct CheckpointTimes {
  double write_ms = 0, fsync_ms = 0;
};

// The stall under study: a synchronous write of the whole state on the
// training thread, made durable with fsync before training goes on.
__attribute__((noinline)) CheckpointTimes WriteCheckpoint(const std::string& path,
                                                         const std::vector<char>& state) {
  CheckpointTimes t;
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "checkpoint_stall: cannot create checkpoint %s: %s\n", path.c_str(), strerror(errno));
    exit(1);
  }
  auto fail = [&](const char* what) {
    fprintf(stderr, "checkpoint_stall: %s of checkpoint %s failed: %s\n", what, path.c_str(), strerror(errno));
    close(fd);
    unlink(path.c_str());
    exit(1);
  };
  auto t0 = Clock::now();
  for (size_t off = 0; off < state.size();) {
    size_t len = std::min<size_t>(kChunk, state.size() - off);
    ssize_t n = write(fd, state.data() + off, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    off += static_cast<size_t>(n);
  }
  t.write_ms = MsSince(t0);
  auto t1 = Clock::now();
  if (fsync(fd) != 0) fail("fsync");
  t.fsync_ms = MsSince(t1);
  close(fd);
  return t;
}

// The seed scenario's checkpoint: a fresh buffer of random bytes from the
// kernel (as Python's os.urandom makes one), written in one write() and
// not synced, then the file is removed by the caller.
__attribute__((noinline)) CheckpointTimes WriteRandomCheckpoint(const std::string& path, size_t bytes,
                                                               double* random_ms) {
  auto t0 = Clock::now();
  std::vector<char> data(bytes);  // fresh memory each time, as a new bytes object is
  for (size_t off = 0; off < bytes;) {
    ssize_t n = getrandom(data.data() + off, bytes - off, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die("getrandom of %zu bytes failed: %s", bytes - off, strerror(errno));
    off += static_cast<size_t>(n);
  }
  *random_ms = MsSince(t0);
  CheckpointTimes t;
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) Die("cannot create checkpoint %s: %s", path.c_str(), strerror(errno));
  auto t1 = Clock::now();
  for (size_t off = 0; off < bytes;) {
    ssize_t n = write(fd, data.data() + off, bytes - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die("write of checkpoint %s failed: %s", path.c_str(), strerror(errno));
    off += static_cast<size_t>(n);
  }
  t.write_ms = MsSince(t1);
  close(fd);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseOptions(argc, argv);

  Model m;
  m.weights.resize(kDim * kDim);
  m.input.resize(kDim * kDim);
  m.output.resize(kDim * kDim);
  for (unsigned i = 0; i < kDim * kDim; ++i) {
    m.weights[i] = static_cast<float>(i * 7919u % 1000) / 1000.0f - 0.5f;
    m.input[i] = static_cast<float>(i * 104729u % 1000) / 1000.0f;
  }
  // The checkpoint is the model's state: real, non-zero bytes, built once so
  // the checkpoint step costs only the I/O.
  std::vector<char> state(static_cast<size_t>(o.mb) * kChunk);
  for (size_t i = 0; i < state.size(); ++i) state[i] = static_cast<char>(i * 2654435761u >> 24);

  printf("checkpoint_stall: %ld steps of %ld ms compute, a %ld MiB checkpoint into %s every %ld steps\n",
         o.steps, o.step_ms, o.mb, o.dir.c_str(), o.period);
  fflush(stdout);

  double plain_total = 0, ckpt_total = 0;
  long plain_n = 0, ckpt_n = 0;
  for (long step = 1; step <= o.steps; ++step) {
    auto t0 = Clock::now();
    TrainStep(m, o.step_ms);
    double compute_ms = MsSince(t0);
    if (step % o.period != 0) {
      double ms = MsSince(t0);
      printf("step %ld/%ld: %.1f ms (compute %.1f ms)\n", step, o.steps, ms, compute_ms);
      plain_total += ms;
      ++plain_n;
    } else {
      std::string path = o.dir + "/checkpoint-step" + std::to_string(step) + ".bin";
      double random_ms = 0;
      CheckpointTimes ct = o.random ? WriteRandomCheckpoint(path, state.size(), &random_ms) : WriteCheckpoint(path, state);
      if (unlink(path.c_str()) != 0)
        fprintf(stderr, "checkpoint_stall: cannot remove %s: %s\n", path.c_str(), strerror(errno));
      double ms = MsSince(t0);
      if (o.random)
        printf("step %ld/%ld: %.1f ms (compute %.1f ms, checkpoint %.1f ms: random %ld MiB %.1f ms, write %.1f ms, %s)\n",
               step, o.steps, ms, compute_ms, ms - compute_ms, o.mb, random_ms, ct.write_ms, path.c_str());
      else
        printf("step %ld/%ld: %.1f ms (compute %.1f ms, checkpoint %.1f ms: write %ld MiB %.1f ms, fsync %.1f ms, %s)\n",
               step, o.steps, ms, compute_ms, ms - compute_ms, o.mb, ct.write_ms, ct.fsync_ms, path.c_str());
      ckpt_total += ms;
      ++ckpt_n;
    }
    fflush(stdout);
    if (o.sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(o.sleep_ms));
  }

  float checksum = 0;
  for (float v : m.input) checksum += v;
  printf("checkpoint_stall: mean step %.1f ms without a checkpoint, %.1f ms with one (checksum %g)\n",
         plain_n ? plain_total / plain_n : 0.0, ckpt_n ? ckpt_total / ckpt_n : 0.0, checksum);
  return 0;
}
