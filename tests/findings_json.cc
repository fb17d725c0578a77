//===- findings_json.cc - stall findings from --json, for assertions -----===//
#include "tests/findings_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/util.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// One line per field: "<finding index>\t<field>\t<value>"; values have no
// tabs or newlines (json.dumps escapes them in lists, and titles have none).
constexpr char kFlatten[] = R"py(
import json, sys
doc = json.load(open(sys.argv[1]))
for i, f in enumerate(doc["findings"]):
    row = {k: f[k] for k in ("title", "count", "total_ns", "worst_ns", "share", "period", "fix")}
    row.update(f["detail"])
    for k, v in row.items():
        text = v if isinstance(v, str) else json.dumps(v)
        print(i, k, text.replace("\t", " ").replace("\n", " "), sep="\t")
)py";

}  // namespace

std::vector<FindingFields> ReadStallFindings(const std::string& path, std::string* error) {
  CmdResult r = RunCmd({"/usr/bin/python3", "-c", kFlatten, path});
  if (r.status != 0) {
    *error = "python3 could not read " + path + " as stall findings: " + r.err;
    return {};
  }
  std::vector<FindingFields> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cols = Split(line, '\t');
    if (cols.size() != 3) continue;
    size_t i = std::stoul(cols[0]);
    if (out.size() <= i) out.resize(i + 1);
    out[i][cols[1]] = cols[2];
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
  CmdResult r = RunCmd({"/usr/bin/python3", "-c",
                        "import json, sys\n"
                        "for f in json.load(open(sys.argv[1]))['files']:\n"
                        "    if str(f.get(sys.argv[2])) == sys.argv[3]:\n"
                        "        for k, v in f.items(): print(k, json.dumps(v), sep='\\t')\n",
                        json_path, field, value});
  EXPECT_EQ(r.status, 0) << "python3 could not read " << json_path << " as a pagecache report: " << r.err;
  FindingFields out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    if (tab != std::string::npos) out[line.substr(0, tab)] = line.substr(tab + 1);
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
