//===- finding_print.h - Findings as text for people and JSON for tools --===//
// Every diagnosing pass hands its Findings here, so they all read alike: a
// numbered headline, the facts aligned under it, the cost, the period and
// the fix in plain words, and with -v the evidence (histograms, stacks).
// The JSON form carries every field of Finding, plus what a pass adds.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analyze/finding.h"

namespace syspgo {

inline constexpr size_t kTopFindings = 10;  // findings (and rows of a finding's table) text shows without --all

// `number` is the finding's place in the list (1-based). With `all`, every
// row of its table; else the first kTopFindings and how many more.
std::string FindingText(const Finding& f, size_t number, bool verbose, bool all = false);
// A list of findings as text: every one with `all`, else the first
// kTopFindings and a line saying how many more there are and that --all
// shows them.
std::string FindingsText(const std::vector<Finding>& findings, bool verbose, bool all);
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
