//===- finding_print.h - Findings as text for people and JSON for tools --===//
// Every diagnosing pass hands its Findings here, so they all read alike: a
// numbered headline, the facts aligned under it, the cost, the period and
// the fix in plain words, and with -v the evidence (histograms, stacks).
// The JSON form carries every field of Finding, plus what a pass adds.
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "analyze/finding.h"

namespace syspgo {

// `number` is the finding's place in the list (1-based).
std::string FindingText(const Finding& f, size_t number, bool verbose);
// A JSON object of every field, and last what the pass adds as "detail"
// (left out if null).
nlohmann::ordered_json FindingJson(const Finding& f, nlohmann::ordered_json detail);

// `value` wrapped at word boundaries as findings' facts are (100 columns);
// lines after the first start at column `col`.
std::string WrapText(const std::string& value, size_t col);

// "5th", "2nd", "11th".
std::string Ordinal(int64_t n);
// "8.4%" (one decimal; "<0.1%" for small non-zero shares).
std::string FormatShare(double share);

}  // namespace syspgo
