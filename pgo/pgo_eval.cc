//===- pgo_eval.cc - paired bootstrap, the final choice, profile quality -===//
#include "pgo/pgo_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "common/stats.h"

namespace syspgo {
namespace {

// splitmix64: small, fast, and the same sequence on every platform (the
// standard distributions are not), so a decision can be replayed.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

double Quantile(std::vector<double> xs, double q) {
  std::sort(xs.begin(), xs.end());
  double pos = q * static_cast<double>(xs.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (xs[hi] - xs[lo]) * (pos - static_cast<double>(lo));
}

std::string Fixed(const char* fmt, double x) {
  char b[64];
  snprintf(b, sizeof b, fmt, x);
  return b;
}

// 12345 -> "12,345".
std::string Thousands(uint64_t n) {
  std::string d = std::to_string(n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

}  // namespace

PgoMeasure MeasureOf(const std::string& metric) {
  return metric == "instructions" ? PgoMeasure::kCounted : PgoMeasure::kTimed;
}

PgoInterval PairedSpeedup(const std::vector<double>& ref, const std::vector<double>& cand, PgoMeasure measure,
                          uint64_t seed) {
  PgoInterval iv;
  size_t n = std::min(ref.size(), cand.size());
  if (n == 0) return iv;
  std::vector<double> a(ref.begin(), ref.begin() + static_cast<long>(n)), b(cand.begin(), cand.begin() + static_cast<long>(n));
  double mb = Median(b);
  iv.ratio = mb > 0 ? Median(a) / mb : 0;
  auto constant = [](const std::vector<double>& xs) { return std::equal(xs.begin() + 1, xs.end(), xs.begin()); };
  if (measure == PgoMeasure::kTimed && n < 2) {
    iv.one_timed_round = true;
    return iv;
  }
  if (measure == PgoMeasure::kCounted && constant(a) && constant(b)) {
    // Every resample would give the ratio itself.
    iv.low = iv.high = iv.ratio;
    iv.same_every_round = true;
    return iv;
  }
  Rng rng{seed};
  std::vector<double> ratios, ra(n), rb(n);
  ratios.reserve(kPgoResamples);
  for (int k = 0; k < kPgoResamples; ++k) {
    // Rounds are resampled whole, so a slow moment of the machine stays
    // paired: it lands on both builds of its round.
    for (size_t i = 0; i < n; ++i) {
      size_t j = rng.Below(n);
      ra[i] = a[j], rb[i] = b[j];
    }
    double m = Median(rb);
    if (m > 0) ratios.push_back(Median(ra) / m);
  }
  if (ratios.empty()) return iv;
  iv.low = Quantile(ratios, 0.025);
  iv.high = Quantile(ratios, 0.975);
  return iv;
}

PgoVerdict Judge(const PgoInterval& iv) {
  if (iv.low > 1 + kPgoMinEffect) return PgoVerdict::kFaster;
  if (iv.high > 0 && iv.high < 1 - kPgoMinEffect) return PgoVerdict::kSlower;
  return PgoVerdict::kNoDifference;
}

const char* VerdictName(PgoVerdict v) {
  static const char* const names[] = {"faster", "slower", "no significant difference"};
  return names[static_cast<int>(v)];
}

std::string DescribeSpeedup(const PgoInterval& iv) {
  PgoVerdict v = Judge(iv);
  // Where there is no interval, the ratio is the whole result, whatever the verdict.
  if (iv.same_every_round)
    return std::string(VerdictName(v)) + " " + Fixed("%.3fx", iv.ratio) +
           " (the same in every round: counted, not timed)";
  if (iv.one_timed_round)
    return std::string(VerdictName(v)) + " (" + Fixed("%.3fx", iv.ratio) + " in one timed round: no interval)";
  std::string ci = "95% CI " + Fixed("%.3f", iv.low) + "-" + Fixed("%.3f", iv.high);
  if (v == PgoVerdict::kNoDifference) return std::string(VerdictName(v)) + " (" + ci + ")";
  return std::string(VerdictName(v)) + " " + Fixed("%.3fx", iv.ratio) + " (" + ci + ")";
}

namespace {

// The times a stage may not lose in, whatever the deciding metric: a
// stage slower than the user's build in either, with confidence, is refused.
struct TimeCheck {
  const char* name;
  PgoInterval PgoEvalVariant::*vs_plain;
};
constexpr TimeCheck kTimeChecks[] = {{"wall time", &PgoEvalVariant::wall_vs_plain},
                                     {"CPU time", &PgoEvalVariant::cpu_vs_plain}};

// ", but slower than your build in wall time: slower 0.904x (...)" for the
// first time `x` loses in with confidence, "" if none.
std::string SlowerInTime(const PgoEvalVariant& x) {
  for (const TimeCheck& t : kTimeChecks)
    if (Judge(x.*t.vs_plain) == PgoVerdict::kSlower)
      return std::string(", but slower than your build in ") + t.name + ": " + DescribeSpeedup(x.*t.vs_plain) +
             ", so not chosen";
  return "";
}

// Whether `iv` still straddles the threshold with its point estimate
// beyond it: more rounds may make it sure.
bool Straddles(const PgoInterval& iv) {
  bool above = iv.low > 1 + kPgoMinEffect, below = iv.high > 0 && iv.high < 1 - kPgoMinEffect;
  bool point_beyond = iv.ratio > 1 + kPgoMinEffect || (iv.ratio > 0 && iv.ratio < 1 - kPgoMinEffect);
  return !above && !below && point_beyond;
}

}  // namespace

std::string UnhelpfulStageText(const PgoEvalVariant& x, const std::string& metric) {
  size_t rounds = x.values.size();
  return "the " + x.name + " stage did not help on the evaluation command (" + metric + ", " + std::to_string(rounds) +
         (rounds == 1 ? " round)" : " rounds)") + ": against your build, " + DescribeSpeedup(x.vs_plain);
}

size_t ChooseFinalVariant(const std::vector<PgoEvalVariant>& v, const std::string& metric, std::string* why) {
  size_t pick = 0;
  std::string verdicts;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].name == kPgoProfilingVariant) continue;
    if (!v[i].failed.empty()) {
      verdicts += (verdicts.empty() ? "" : "; ") + v[i].name + " failed the evaluation command";
      continue;
    }
    bool better = Judge(v[i].vs_plain) == PgoVerdict::kFaster;
    std::string note = better ? SlowerInTime(v[i]) : "";
    better = better && note.empty();
    if (better && pick != 0) {
      PgoInterval vs_pick = PairedSpeedup(v[pick].values, v[i].values, MeasureOf(metric));
      better = Judge(vs_pick) == PgoVerdict::kFaster;
      if (!better) note = ", not faster than " + v[pick].name + " with confidence";
    }
    if (better) pick = i;
    verdicts += (verdicts.empty() ? "" : "; ") + v[i].name + " " + DescribeSpeedup(v[i].vs_plain) + note;
  }
  std::string rounds = std::to_string(v.empty() ? 0 : v[0].values.size()) + " paired rounds";
  if (!v.empty() && v[0].seconds.size() > v[0].values.size())
    rounds += ", " + std::to_string(v[0].seconds.size()) + " timed";
  std::string w = pick == 0 ? "no stage was faster than your build with confidence"
                            : v[pick].name + " is faster than your build";
  w += " (" + metric + ", " + rounds + (verdicts.empty() ? "" : ": " + verdicts) + ")";
  if (why) *why = w;
  return pick;
}

bool EvalUndecided(const std::vector<PgoEvalVariant>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].name == kPgoProfilingVariant || !v[i].failed.empty()) continue;
    if (Straddles(v[i].vs_plain)) return true;
    // Faster on the metric, yet wall time cannot say yet whether it loses.
    if (Judge(v[i].vs_plain) == PgoVerdict::kFaster && Straddles(v[i].wall_vs_plain)) return true;
  }
  return false;
}

std::string PgoProfileQuality::Line(const std::string& binary_name) const {
  std::string s = "profile quality: " + Thousands(binary_samples) + " samples in " + binary_name + " (" +
                  Fixed("%.1f", 100 * run_share) + "% of the training run's)";
  std::string h;
  for (const auto& [name, share] : hot) {
    std::string shown = name.size() > 32 ? name.substr(0, 29) + "..." : name;
    h += (h.empty() ? "" : ", ") + shown + " " + Fixed("%.0f%%", 100 * share);
  }
  if (!h.empty()) s += ", hot: " + h;
  s += "; halves agree " + Fixed("%.1f", 100 * halves_agreement) + "%";
  return s + (thin ? ": TOO THIN" : ": enough");
}

PgoProfileQuality MeasureProfileQuality(const std::string& profile_text, uint64_t binary_samples, uint64_t run_samples,
                                        uint64_t seed) {
  PgoProfileQuality q;
  q.binary_samples = binary_samples;
  q.run_samples = run_samples;
  q.run_share = run_samples ? static_cast<double>(binary_samples) / static_cast<double>(run_samples) : 0;
  std::map<std::string, uint64_t> fns;
  std::vector<uint64_t> lines;  // each body line's own count ("OFFSET[.DISC]: COUNT ...")
  std::istringstream in(profile_text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] != ' ' && line[0] != '\t') {
      size_t head = line.rfind(':');
      size_t total = head == std::string::npos || head == 0 ? std::string::npos : line.rfind(':', head - 1);
      if (total != std::string::npos) fns[line.substr(0, total)] += strtoull(line.c_str() + total + 1, nullptr, 10);
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t p = line.find_first_not_of(' ', colon + 1);
    if (p == std::string::npos || !isdigit(static_cast<unsigned char>(line[p]))) continue;  // an inlined call site's header
    lines.push_back(strtoull(line.c_str() + p, nullptr, 10));
  }
  std::vector<std::pair<std::string, uint64_t>> byhot(fns.begin(), fns.end());
  std::sort(byhot.begin(), byhot.end(),
            [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  if (byhot.size() > 3) byhot.resize(3);
  double fn_total = 0;
  for (auto& [f, c] : fns) fn_total += static_cast<double>(c);
  for (auto& [f, c] : byhot) q.hot.emplace_back(f, fn_total > 0 ? static_cast<double>(c) / fn_total : 0);
  // Counts scaled to the samples taken (see the header).
  double line_total = 0;
  for (uint64_t c : lines) line_total += static_cast<double>(c);
  double scale = line_total > 0 && binary_samples ? static_cast<double>(binary_samples) / line_total : 1;
  for (uint64_t& c : lines) c = static_cast<uint64_t>(std::llround(static_cast<double>(c) * scale));

  // Each sample of a line goes to half A or B with even odds; large counts
  // by the normal approximation of that binomial draw.
  Rng rng{seed};
  std::vector<double> ha(lines.size()), hb(lines.size());
  double ta = 0, tb = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    uint64_t c = lines[i], a = 0;
    if (c <= 64) {
      for (uint64_t k = 0; k < c; ++k) a += rng.Next() & 1;
    } else {
      double u1 = std::max(rng.Unit(), 1e-300), u2 = rng.Unit();
      double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
      double x = std::round(static_cast<double>(c) / 2 + z * std::sqrt(static_cast<double>(c)) / 2);
      a = static_cast<uint64_t>(std::clamp(x, 0.0, static_cast<double>(c)));
    }
    ha[i] = static_cast<double>(a), hb[i] = static_cast<double>(c - a);
    ta += ha[i], tb += hb[i];
  }
  for (size_t i = 0; i < lines.size() && ta > 0 && tb > 0; ++i) q.halves_agreement += std::min(ha[i] / ta, hb[i] / tb);

  q.thin = binary_samples < kPgoMinBinarySamples || q.halves_agreement < kPgoMinHalvesAgreement;
  if (q.thin) {
    std::vector<std::string> why;
    if (binary_samples < kPgoMinBinarySamples) why.push_back("fewer than " + Thousands(kPgoMinBinarySamples) + " samples in the binary");
    if (q.halves_agreement < kPgoMinHalvesAgreement)
      why.push_back("two halves of its samples agree on only " + Fixed("%.1f", 100 * q.halves_agreement) + "% (want " +
                    Fixed("%.0f", 100 * kPgoMinHalvesAgreement) + "%)");
    std::string w;
    for (auto& x : why) w += (w.empty() ? "" : " and ") + x;
    q.advice = "the profile is too thin to guide the compiler (" + w + "): raise --freq (up to 10000), add --train-runs, "
               "or give --train a longer run of the program";
  }
  return q;
}

}  // namespace syspgo
