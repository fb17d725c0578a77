//===- json_text_test.cc - the JSON strings syspgo writes parse anywhere ---===//
// Paths, task names and symbols come from outside and may be any bytes.
// Every JSON output (analyses' --json, the report's data, the export) quotes
// them through JsonEscape or JsonQuote: they must give JSON that a strict
// parser reads, whatever the input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "analyze/report_common.h"
#include "common/util.h"

namespace syspgo {
namespace {

std::string Parsed(const std::string& quoted) {
  auto j = nlohmann::json::parse(quoted, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << quoted;
  return j.is_string() ? j.get<std::string>() : "(not a string)";
}

TEST(JsonText, InvalidUtf8BecomesReplacementCharacters) {
  const std::string latin1 = "/data/caf\xe9.bin";  // a Latin-1 name, not UTF-8
  EXPECT_EQ(Parsed("\"" + JsonEscape(latin1) + "\""), "/data/caf\xEF\xBF\xBD.bin");
  EXPECT_EQ(Parsed(JsonQuote(latin1)), "/data/caf\xEF\xBF\xBD.bin") << "both escapers agree";
  const std::string truncated = "x\xe2\x82";  // the first two bytes of a 3-byte sequence
  EXPECT_FALSE(Parsed(JsonQuote(truncated)).empty());
}

TEST(JsonText, ValidTextAndControlsRoundTrip) {
  const std::string s = "caf\xC3\xA9 \"q\" back\\slash\nnew\tline\x01";
  EXPECT_EQ(Parsed("\"" + JsonEscape(s) + "\""), s);
  EXPECT_EQ(Parsed(JsonQuote(s)), s);
}

TEST(JsonText, QuoteKeepsAScriptTagFromClosingThePagesDataBlock) {
  std::string q = JsonQuote("</script><script>alert(1)</script>");
  EXPECT_EQ(q.find('<'), std::string::npos) << q;
  EXPECT_EQ(Parsed(q), "</script><script>alert(1)</script>");
}

}  // namespace
}  // namespace syspgo
