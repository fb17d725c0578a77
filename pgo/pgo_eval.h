//===- pgo_eval.h - `syspgo pgo`'s decisions: intervals and profile quality =//
// The statistics `syspgo pgo` decides by, apart from the pipeline so they
// can be tested on given figures: the speedup of one build over another as
// a paired bootstrap confidence interval (a seeded generator, so the same
// measurements always give the same decision), the verdict it supports,
// the choice of the final binary, and how good a sample profile is (its
// samples, its hot functions, and how well two random halves of it agree).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace syspgo {

// A speedup (reference / candidate: above 1 is faster) with its 95% interval.
// When every round counted the same on both sides, as counts of a program
// that does the same work each run do (cachegrind's instructions), the
// interval is the ratio itself: there is no spread to give, and it is said
// as such rather than as "CI 1.091-1.091". One timed round has no interval
// at all (low and high stay 0): a time never repeats exactly, so one round
// cannot tell a difference from the machine's noise.
struct PgoInterval {
  double ratio = 0, low = 0, high = 0;
  bool same_every_round = false;
  bool one_timed_round = false;
};

// What a metric's rounds are: times, which vary from round to round, or
// counts, which a program doing the same work repeats exactly.
enum class PgoMeasure { kTimed, kCounted };
// The measure of an evaluation metric by its name ("instructions" counts).
PgoMeasure MeasureOf(const std::string& metric);

// The bootstrap's resamples and its fixed seed.
constexpr int kPgoResamples = 2000;
constexpr uint64_t kPgoSeed = 0x53595350474f;  // "SYSPGO"
// A gain smaller than this is "no significant difference" even when the
// interval is sure of it (instruction counts barely vary between runs):
// not worth a rebuild.
constexpr double kPgoMinEffect = 0.005;

// The speedup of `cand` over `ref`, measured in the same rounds (ref[k] and
// cand[k] ran side by side): the ratio of their medians, and the 2.5th and
// 97.5th percentiles of that ratio over resampled rounds. Lower is better
// for the measurements (seconds, instructions). Both must be the same
// non-zero length. When each side of a count measured the same in every
// round, the interval is the ratio and same_every_round is set; a time
// measured once has none (one_timed_round).
PgoInterval PairedSpeedup(const std::vector<double>& ref, const std::vector<double>& cand,
                          PgoMeasure measure = PgoMeasure::kTimed, uint64_t seed = kPgoSeed);

enum class PgoVerdict { kFaster, kSlower, kNoDifference };
PgoVerdict Judge(const PgoInterval& iv);
const char* VerdictName(PgoVerdict v);  // "faster", "slower", "no significant difference"
// For people: "faster 1.083x (95% CI 1.051-1.110)", "slower 0.950x (...)",
// "no significant difference (95% CI 0.982-1.021)". Never a bare ratio. An
// interval the same in every round gives the ratio and why there is no
// interval: "faster 1.091x (the same in every round: counted, not timed)".
std::string DescribeSpeedup(const PgoInterval& iv);

// One variant of the evaluation. `values` are what the decision is made on,
// one per round (seconds of wall time, or instructions with --eval-metric
// instructions); the others are reported beside them.
struct PgoEvalVariant {
  std::string name;                  // plain, base, sample, order, bolt
  std::vector<double> values;        // the deciding metric, per round
  std::vector<double> seconds;       // wall time, per round
  std::vector<double> cpu_seconds;   // user + system time of the command, per round
  std::vector<double> instructions;  // cachegrind's instruction count, per round (--eval-metric instructions)
  PgoInterval vs_plain, vs_base;     // on `values`; vs_base left at 0 when there is no profiling build
  // Wall and CPU time against the user's build, whatever `values` are: a
  // stage slower in either with confidence is never chosen. Left at 0 (no
  // verdict) when the times were not measured.
  PgoInterval wall_vs_plain, cpu_vs_plain;
  bool output_differs = false;
  std::string failed;                // why the evaluation command failed on it ("" if it did not): never chosen
};

constexpr const char* kPgoPlainVariant = "plain";   // the user's own build: the reference
constexpr const char* kPgoProfilingVariant = "base";  // the profiling build: reported, never chosen

// Which variant becomes the final binary. v[0] is the user's own build;
// the profiling build is never chosen. Going through the stages in order,
// a stage replaces the one chosen so far only when it is faster than the
// user's build and faster than the chosen one on `values`, each with
// confidence (Judge), and not slower than the user's build with confidence
// in wall or CPU time (wall_vs_plain, cpu_vs_plain): fewer instructions do
// not make a binary that runs longer a better one. So a stage within noise
// is not chosen, and `why` names every stage's verdict, the slower ones as
// slower.
size_t ChooseFinalVariant(const std::vector<PgoEvalVariant>& v, const std::string& metric, std::string* why);
// The warning for stage `x`, not faster than the user's build on `metric`
// with confidence, with the rounds that metric was measured in (counted
// instructions settle and stop while the times go on).
std::string UnhelpfulStageText(const PgoEvalVariant& x, const std::string& metric);
// Whether more rounds could change the decision: a stage's interval
// against the user's build still straddles the threshold, on `values` or,
// for a stage faster on them, in wall time.
bool EvalUndecided(const std::vector<PgoEvalVariant>& v);

// How good a sample profile is.
struct PgoProfileQuality {
  uint64_t binary_samples = 0;  // samples in the binary
  uint64_t run_samples = 0;     // every sample of the training run(s)
  double run_share = 0;         // binary_samples / run_samples: the share of the run's time it covers
  std::vector<std::pair<std::string, double>> hot;  // the hottest functions and their shares of the profile
  double halves_agreement = 0;  // sum over lines of min(share in half A, share in half B)
  bool thin = false;
  std::string advice;           // when thin: what to change
  std::string Line(const std::string& binary_name) const;  // the one line `syspgo pgo` prints
};
constexpr uint64_t kPgoMinBinarySamples = 10000;
constexpr double kPgoMinHalvesAgreement = 0.90;

// The quality of the text sample profile `profile_text`. The halves are a
// seeded random split of every line's count (binomial thinning: each sample
// falls in either half with even odds), compared as distributions over the
// profile's lines. The profile's counts are estimates in their own unit,
// so they are first scaled to `binary_samples` in all: the split is of as
// many samples as were taken. The shares of the training run come from the
// artifact's own figures.
PgoProfileQuality MeasureProfileQuality(const std::string& profile_text, uint64_t binary_samples,
                                        uint64_t run_samples, uint64_t seed = kPgoSeed);

}  // namespace syspgo
