//===- sample_pprof.h - CPU samples from a pprof profile.proto -----------===//
// The reader behind `syspgo optimize --pprof` and `syspgo merge FILE.pb.gz`:
// a pprof CPU profile (from syspgo itself, gperftools through `go tool
// pprof -proto`, or a continuous-profiling backend that merged a fleet's)
// becomes a SampleSet, the form the database's samples take, so that every
// emitter reads it unchanged. A frame is placed by its mapping: file offset
// = address - memory_start + file_offset, in the binary named by the
// mapping's build-id (else its path). pprof's producers write a caller
// frame's address one byte before its return address ("in the middle of a
// call instruction": Go's runtime, pprof's own converter of gperftools
// profiles, and syspgo); it is turned back into the return address the
// database holds, so call sites resolve exactly as they do for a run.
//
// A pprof file is outside input: its size on disk, its size after gunzip
// and its sample counts are bounded (PprofLimits), every id and string index
// is checked, and errors name the file and what to do about it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/sample_set.h"
#include "common/result.h"

namespace syspgo {

// What a pprof file may make syspgo read and hold. The defaults hold a
// fleet's merged CPU profile many times over (pprof backends export tens
// of MB); past them the file is refused, never read in part.
struct PprofLimits {
  uint64_t max_file_bytes = 256ull << 20;   // the file as stored, gzipped or not
  uint64_t max_proto_bytes = 512ull << 20;  // after gunzip (a gzip bomb stops here)
  uint64_t max_samples = 1ull << 40;        // CPU samples in all, so weights and scaling cannot overflow
  size_t max_depth = 1024;                  // frames kept per stack, innermost first
};

struct PprofSamples {
  SampleSet set;
  // Samples that could not be used whole (no addresses, frames outside
  // their mapping, stacks cut), with how many, for the user to see.
  std::vector<std::string> warnings;
};

// True if `path` looks like a pprof profile rather than a profile
// database: gzip data, or a name ending in .pb, .pb.gz or .pprof that is
// not an SQLite file. Unreadable paths are not pprof (the database opener
// then says why).
bool IsPprofFile(const std::string& path);

// Reads the CPU samples of the pprof profile at `path` (gzipped or not),
// opened with the invoking user's rights. Samples are counted by the
// sample type samples/count, else cpu/nanoseconds divided by the period;
// off_cpu/nanoseconds values, where present, become SampleSet::offcpu.
// A "pid" label gives the process, a "comm" label its task name.
Result<PprofSamples> LoadPprofSamples(const std::string& path, const PprofLimits& limits = {});

}  // namespace syspgo
