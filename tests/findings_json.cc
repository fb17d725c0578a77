//===- findings_json.cc - stall findings from --json, for assertions -----===//
#include "tests/findings_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/util.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

using nlohmann::ordered_json;

// A value as the tests compare it: a string as it is, anything else as
// its JSON text on one line.
std::string Flat(const ordered_json& v) { return v.is_string() ? v.get<std::string>() : JsonText(v); }

}  // namespace

std::vector<FindingFields> ReadStallFindings(const std::string& path, std::string* error) {
  ordered_json doc = ordered_json::parse(ReadAll(path), nullptr, false);
  std::vector<FindingFields> out;
  try {
    for (const ordered_json& f : doc.at("findings")) {
      FindingFields& row = out.emplace_back();
      for (const char* k : {"title", "count", "total_ns", "worst_ns", "share", "period", "fix"}) row[k] = Flat(f.at(k));
      for (const auto& [k, v] : f.at("detail").items()) row[k] = Flat(v);
    }
  } catch (const ordered_json::exception& e) {
    *error = path + (doc.is_discarded() ? " is not valid JSON" : " does not hold stall findings: " + std::string(e.what()));
    return {};
  }
  return out;
}

std::vector<FindingFields> AnalyzeStalls(const std::string& db, const std::string& json_path, std::string* error) {
  CmdResult r = RunCmd({SyspgoBin(), "analyze", db, "stalls", "--json"});
  if (r.status != 0) {
    *error = "syspgo analyze " + db + " stalls --json failed: " + r.err;
    return {};
  }
  std::ofstream(json_path) << r.out;
  return ReadStallFindings(json_path, error);
}

FindingFields PagecacheFileRow(const std::string& json_path, const std::string& field, const std::string& value) {
  ordered_json doc = ordered_json::parse(ReadAll(json_path), nullptr, false);
  EXPECT_TRUE(doc.is_object() && doc.contains("files")) << json_path << " is not a pagecache report";
  FindingFields out;
  if (!doc.is_object() || !doc.contains("files")) return out;
  for (const ordered_json& f : doc["files"]) {
    if (!f.contains(field) || Flat(f[field]) != value) continue;
    for (const auto& [k, v] : f.items()) out[k] = JsonText(v);
  }
  return out;
}

std::vector<FindingFields> ForThread(const std::vector<FindingFields>& all, const std::string& comm) {
  std::vector<FindingFields> out;
  for (const FindingFields& f : all)
    if (f.count("comm") && f.at("comm") == comm) out.push_back(f);
  return out;
}

}  // namespace syspgo::test
