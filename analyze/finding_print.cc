//===- finding_print.cc - Findings as text for people and JSON for tools -===//
// Long values (a fix, a list of files) are wrapped under their label so a
// finding stays readable in an 100-column terminal; its table and evidence
// fit 120 columns.
#include "analyze/finding_print.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "common/util.h"

namespace syspgo {
namespace {

constexpr size_t kWidth = 100;     // wrap long values here
constexpr size_t kTitleWidth = 120;  // and titles longer than a terminal line here
constexpr size_t kIndent = 4;      // facts under the headline

// "and 3 more files (--all shows every one)", or "" when none is left out.
std::string More(size_t shown, size_t total, const char* one, const char* many) {
  if (shown >= total) return "";
  size_t n = total - shown;
  return "and " + std::to_string(n) + " more " + (n == 1 ? one : many) + " (--all shows every one)";
}

// The finding's table under its facts: the first kTopFindings rows unless
// `all`, indented, within kTitleWidth columns (Table shortens long paths).
std::string TableText(const Finding& f, bool all) {
  if (f.table_columns.empty() || f.table.empty()) return "";
  std::vector<Table::Column> cols;
  for (size_t c = 0; c < f.table_columns.size(); ++c)
    cols.push_back({f.table_columns[c], f.table_columns[c], c == 0 ? Table::Align::kLeft : Table::Align::kRight});
  Table t(cols);
  size_t shown = all ? f.table.size() : std::min(f.table.size(), kTopFindings);
  for (size_t i = 0; i < shown; ++i) t.AddRow(f.table[i]);
  std::string out, pad(kIndent, ' ');
  for (const std::string& line : Split(t.Text(kTitleWidth - kIndent), '\n'))
    if (!line.empty()) out += pad + line + "\n";
  std::string more = More(shown, f.table.size(), "row", "rows");
  return out + (more.empty() ? "" : pad + more + "\n");
}

}  // namespace

std::string WrapText(const std::string& value, size_t col) { return WrapWords(value, col, kWidth); }

std::string Ordinal(int64_t n) {
  const char* suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    else if (n % 10 == 2) suffix = "nd";
    else if (n % 10 == 3) suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

std::string FormatShare(double share) {
  if (share > 0 && share < 0.001) return "<0.1%";
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f%%", share * 100);
  return buf;
}

std::string FindingText(const Finding& f, size_t number, bool verbose, bool all) {
  // Titles, facts and fixes quote paths, task names and commands from the
  // profile: each goes through TerminalSafe (FindingJson keeps them exact).
  std::vector<std::pair<std::string, std::string>> rows;
  rows.emplace_back("count", std::to_string(f.count));
  rows.emplace_back("total", FormatNs(static_cast<uint64_t>(f.total_ns)) + ", " + FormatShare(f.share) +
                                 " of the run's wall time");
  rows.emplace_back("worst", FormatNs(static_cast<uint64_t>(f.worst_ns)));
  for (const auto& [k, v] : f.facts) rows.emplace_back(TerminalSafe(k), TerminalSafe(v));
  if (!f.period.empty()) rows.emplace_back("period", TerminalSafe(f.period));
  if (!f.fix.empty()) rows.emplace_back("fix", TerminalSafe(f.fix));

  size_t label = 0;
  for (const auto& [k, v] : rows) label = std::max(label, k.size());
  std::string head = std::to_string(number) + ". ";
  std::string title = TerminalSafe(f.title);
  if (head.size() + title.size() > kTitleWidth) title = WrapWords(title, head.size(), kTitleWidth);
  std::string out = head + title + "\n";
  for (const auto& [k, v] : rows) {
    size_t col = kIndent + label + 2;
    out += std::string(kIndent, ' ') + k + std::string(label - k.size() + 2, ' ') + WrapWords(v, col, kWidth) + "\n";
  }
  out += TableText(f, all);
  if (verbose && !f.evidence.empty()) {
    out += std::string(kIndent, ' ') + "evidence:\n";
    for (const std::string& e : f.evidence) {
      std::string line = TerminalSafe(e);
      // Histograms and stacks keep their layout; only a line too long is wrapped.
      if (kIndent + 2 + line.size() > kTitleWidth) line = WrapWords(line, kIndent + 4, kTitleWidth);
      out += std::string(kIndent + 2, ' ') + line + "\n";
    }
  }
  return out;
}

std::string FindingsText(const std::vector<Finding>& findings, bool verbose, bool all) {
  size_t shown = all ? findings.size() : std::min(findings.size(), kTopFindings);
  std::string out;
  for (size_t i = 0; i < shown; ++i) out += "\n" + FindingText(findings[i], i + 1, verbose, all);
  std::string more = More(shown, findings.size(), "finding", "findings");
  return out + (more.empty() ? "" : "\n" + more + ".\n");
}

nlohmann::ordered_json FindingJson(const Finding& f, nlohmann::ordered_json detail) {
  using Json = nlohmann::ordered_json;
  Json facts = Json::object();
  for (const auto& [k, v] : f.facts) facts[k] = v;
  Json occurrences = Json::array();
  for (const Occurrence& o : f.occurrences) occurrences.push_back({{"ts", o.ts}, {"dur", o.dur}, {"tid", o.tid}});
  // Six decimals, as this output always had: more would only be the noise
  // of a division.
  double share = std::isfinite(f.share) ? std::round(f.share * 1e6) / 1e6 : 0.0;
  Json j = {{"kind", f.kind},         {"title", f.title},       {"facts", std::move(facts)}, {"count", f.count},
            {"total_ns", f.total_ns}, {"worst_ns", f.worst_ns}, {"share", share},            {"period", f.period},
            {"fix", f.fix},           {"evidence", f.evidence}, {"occurrences", std::move(occurrences)}};
  if (!f.table_columns.empty()) j["table"] = {{"columns", f.table_columns}, {"rows", f.table}};
  if (!detail.is_null()) j["detail"] = std::move(detail);
  return j;
}

}  // namespace syspgo
