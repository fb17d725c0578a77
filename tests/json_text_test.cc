//===- json_text_test.cc - the JSON syspgo writes parses anywhere ---------===//
// Paths, task names and symbols come from outside and may be any bytes.
// Every JSON output (analyses' --json, the report's data, the export, plans)
// is written by JsonText, and the report's data by JsonForScript: they must
// give JSON that a strict parser reads, whatever the input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/report_common.h"
#include "common/util.h"

namespace syspgo {
namespace {

std::string Parsed(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j.is_string() ? j.get<std::string>() : "(not a string)";
}

TEST(JsonText, InvalidUtf8BecomesReplacementCharacters) {
  const std::string latin1 = "/data/caf\xe9.bin";  // a Latin-1 name, not UTF-8
  EXPECT_EQ(Parsed(JsonText(latin1)), "/data/caf\xEF\xBF\xBD.bin");
  EXPECT_EQ(Parsed(JsonForScript(latin1)), "/data/caf\xEF\xBF\xBD.bin") << "both agree";
  const std::string truncated = "x\xe2\x82";  // the first two bytes of a 3-byte sequence
  EXPECT_FALSE(Parsed(JsonText(truncated)).empty());
}

TEST(JsonText, ValidTextAndControlsRoundTrip) {
  const std::string s = "caf\xC3\xA9 \"q\" back\\slash\nnew\tline\x01";
  EXPECT_EQ(Parsed(JsonText(s)), s);
  EXPECT_EQ(Parsed(JsonForScript(s)), s);
}

TEST(JsonText, KeepsMembersInTheOrderTheyWereAdded) {
  nlohmann::ordered_json j = {{"zeta", 1}, {"alpha", "two"}};
  j["middle"] = {{"b", true}, {"a", nullptr}};
  EXPECT_EQ(JsonText(j), R"({"zeta":1,"alpha":"two","middle":{"b":true,"a":null}})");
  EXPECT_EQ(JsonDocument(j), "{\n \"zeta\": 1,\n \"alpha\": \"two\",\n \"middle\": {\n  \"b\": true,\n  \"a\": null\n }\n}\n");
}

TEST(JsonText, ForScriptKeepsAScriptTagFromClosingThePagesDataBlock) {
  nlohmann::ordered_json j = {{"title", "</script><script>alert(1)</script>"}};
  std::string text = JsonForScript(j);
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(text)["title"], "</script><script>alert(1)</script>");
}

TEST(JsonText, TableRowsKeepNumbersAndStrings) {
  Table t({{"path", "path", Table::Align::kLeft},
           {"size", "size", Table::Align::kRight, true},
           {"share", "share", Table::Align::kRight, true},
           {"odd", "odd", Table::Align::kRight, true}});
  t.AddRow({"/a b", "1 KiB", "-", "x"}, {"/a b", "1024", "null", "not a number"});
  t.AddRow({"/c", "0 B", "50%", ""}, {"/c", "0", "0.500", ""});
  EXPECT_EQ(JsonText(t.JsonRows()), R"([{"path":"/a b","size":1024,"share":null,"odd":"not a number"},)"
                                    R"({"path":"/c","size":0,"share":0.5,"odd":""}])");
  Table empty({Table::Column{"n", "n"}});
  EXPECT_EQ(empty.Json(), "[]\n");
}

}  // namespace
}  // namespace syspgo
