//===- util.h - text helpers shared by every stage -----------------------===//
// Quoting, human units, small files, the clock, and Table: the one way
// syspgo prints tables (aligned text for people, JSON arrays of objects for
// machines).
#pragma once
#include <time.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace syspgo {

// `j` as JSON text, the one way syspgo writes JSON: members in the order
// they were added (build it as an ordered_json), a byte that is not UTF-8
// (a path from a foreign filesystem, a task name) as U+FFFD rather than
// output no parser reads, and with `indent` < 0 all on one line, otherwise
// one member or element a line, nested `indent` spaces deeper. No final
// newline.
std::string JsonText(const nlohmann::ordered_json& j, int indent = -1);
// A whole JSON output (--json, a plan's listing, a summary file): one
// member a line, indented by one space a level, and a final newline.
std::string JsonDocument(const nlohmann::ordered_json& j);
std::string ShellQuote(const std::string& s);   // quotes only when needed
std::string JoinShell(const std::vector<std::string>& argv);
// Text from outside (a path, a command line, a task name, a symbol, a host
// name: anything a profile or plan recorded) made safe to print on a
// terminal. Every byte a terminal could act on is shown as a \xHH escape
// (lowercase hex, as `printf %q` and Python's repr write them): the C0
// controls (newline and tab too: inside a value they would fake a line or
// a column), DEL, the C1 controls (U+0080..U+009F, which some terminals
// take as ESC [), and every byte that is not part of valid UTF-8 (a stray
// 0x9b is CSI to an 8-bit terminal). Valid UTF-8 otherwise passes
// unchanged, and so does '\', so a shell-quoted command line stays as it
// was; the result is for reading, not for parsing back (JSON and HTML
// output keep the exact bytes with their own escaping).
std::string TerminalSafe(std::string_view s);
// The same for a message of several lines: each line is made safe and the
// '\n' between them kept (errors that quote a tool's output).
std::string TerminalSafeLines(std::string_view s);
std::string FormatBytes(uint64_t bytes);        // "10.0 MiB"
// Whole MiB exactly ("16 MiB"), the rest to two decimals ("1.50 MiB"): for
// budgets, which are set in MiB and must read back as they were given.
std::string FormatMib(uint64_t bytes);
std::string Hex(uint64_t v);                    // "0x1f", for an address
std::string FormatNs(uint64_t ns);              // "1.23 ms"
std::string Trim(const std::string& s);
// `clock` now, in ns; CLOCK_MONOTONIC is the clock bpf_ktime_get_ns() reads.
uint64_t NowNs(clockid_t clock);

std::vector<std::string> Split(const std::string& s, char sep);
// `value` wrapped at spaces to lines of at most `width` columns when it
// starts at column `col`; lines after the first start at `col` too (the
// spaces are in the text). A word longer than a line (a path) is broken
// after a '/' where it can be.
std::string WrapWords(const std::string& value, size_t col, size_t width);
// The whole of a file (a /proc or sysfs file, a log); "" if it cannot be read.
std::string ReadFileOrEmpty(const std::string& path);
// Where the symbolic link at `path` points (/proc/PID/exe, a sysfs device
// link); "" if it cannot be read.
std::string ReadLinkOrEmpty(const std::string& path);
// `path` absolute with every symbolic link resolved (realpath(3)); "" if
// it cannot be resolved.
std::string RealPathOrEmpty(const std::string& path);
// FNV-1a, 64 bits, as 16 hex digits: a key for content (kallsyms texts, a
// cache's validity), not a defence against anyone who chooses the bytes.
std::string ContentHash(std::string_view s);

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
  // (for numeric columns a number literal). Text() shows every cell through
  // TerminalSafe; JsonRows() keeps the exact raw values, one object a row,
  // and Json() is them as a JsonDocument.
  void AddRow(std::vector<std::string> shown, std::vector<std::string> raw);
  void AddRow(std::vector<std::string> shown) { AddRow(shown, shown); }
  // Aligned text, each line at most `width` columns: when the cells are
  // wider, the widest left-aligned columns (paths, names) are narrowed and
  // their longer cells shortened in the middle ("/usr/lib/.../libLLVM.so"),
  // never below their header or kMinCut; JsonRows() keeps them whole.
  std::string Text(size_t width = kTextWidth) const;
  static constexpr size_t kTextWidth = 120;
  static constexpr size_t kMinCut = 24;
  nlohmann::ordered_json JsonRows() const;
  std::string Json() const;
  size_t size() const { return rows_.size(); }

 private:
  std::vector<Column> cols_;
  std::vector<std::vector<std::string>> rows_, raw_;
};

}  // namespace syspgo
