//===- util.h - text helpers shared by every stage -----------------------===//
// Quoting, human units, small files, and Table: the one way syspgo prints
// tables (aligned text for people, JSON arrays of objects for machines).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace syspgo {

std::string JsonEscape(const std::string& s);   // without the surrounding quotes
std::string ShellQuote(const std::string& s);   // quotes only when needed
std::string JoinShell(const std::vector<std::string>& argv);
std::string FormatBytes(uint64_t bytes);        // "10.0 MiB"
std::string FormatNs(uint64_t ns);              // "1.23 ms"
std::string Trim(const std::string& s);
std::vector<std::string> Split(const std::string& s, char sep);
// The whole of a file (a /proc or sysfs file, a log); "" if it cannot be read.
std::string ReadFileOrEmpty(const std::string& path);

class Table {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string name;      // header for people
    std::string json_key;  // key in JSON output
    Align align = Align::kRight;
    bool numeric = false;  // JSON: emit the raw value unquoted
  };
  explicit Table(std::vector<Column> cols) : cols_(std::move(cols)) {}
  // A row: for each column the text shown to people and the raw JSON value
  // (for numeric columns a number literal).
  void AddRow(std::vector<std::string> shown, std::vector<std::string> raw);
  void AddRow(std::vector<std::string> shown) { AddRow(shown, shown); }
  std::string Text() const;
  std::string Json() const;
  size_t size() const { return rows_.size(); }

 private:
  std::vector<Column> cols_;
  std::vector<std::vector<std::string>> rows_, raw_;
};

}  // namespace syspgo
