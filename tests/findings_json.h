//===- findings_json.h - stall findings from --json, for assertions ------===//
// The diagnose tests check single fields of single findings. nlohmann's
// strict parser reads the output, so a malformed document fails the test
// instead of being half-parsed, and each finding is flattened to field ->
// text: strings as they are, numbers, lists and objects as one line of
// JSON (JsonText: ["a","b"], {"k":1}).
#pragma once
#include <map>
#include <string>
#include <vector>

namespace syspgo::test {

using FindingFields = std::map<std::string, std::string>;

// Reads `syspgo analyze DB stalls --json` output saved at `path`: per
// finding its title, count, total_ns, worst_ns, share, period, fix and
// every member of its "detail". On a parse error returns nothing and sets
// *error.
std::vector<FindingFields> ReadStallFindings(const std::string& path, std::string* error);

// Runs `syspgo analyze DB stalls --json`, keeps its output in `json_path`
// and reads it; on any failure returns nothing and sets *error.
std::vector<FindingFields> AnalyzeStalls(const std::string& db, const std::string& json_path, std::string* error);

// The files[] row of `syspgo analyze DB pagecache --json` output saved at
// `json_path` whose `field` prints as `value` (e.g. "file" and a path, or
// "ino" and a number), flattened to field -> JSON text; empty if none.
FindingFields PagecacheFileRow(const std::string& json_path, const std::string& field, const std::string& value);

// The findings whose detail.comm is `comm`.
std::vector<FindingFields> ForThread(const std::vector<FindingFields>& all, const std::string& comm);

}  // namespace syspgo::test
