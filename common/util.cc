//===- util.cc - text helpers shared by every stage ----------------------===//
#include "common/util.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <fstream>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

namespace syspgo {

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string ReadLinkOrEmpty(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string RealPathOrEmpty(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

std::string ContentHash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// Through nlohmann's serializer, the one JSON writer: its escaping, and an
// invalid UTF-8 byte (a path from a foreign filesystem) replaced by U+FFFD
// rather than passed through into output no JSON parser would read.
std::string JsonText(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string JsonDocument(const nlohmann::ordered_json& j) { return JsonText(j, 1) + "\n"; }

std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_-+=:,./") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (2 to 4 bytes; 1 for
// ASCII), or 0 when the bytes there are not one: a stray continuation byte,
// an overlong form, a surrogate, past U+10FFFF, or cut short.
size_t Utf8Length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return byte(k) >= lo && byte(k) <= hi; };
  unsigned b = byte(0);
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    bool second = b == 0xe0 ? cont(1, 0xa0) : b == 0xed ? cont(1, 0x80, 0x9f) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    bool second = b == 0xf0 ? cont(1, 0x90) : b == 0xf4 ? cont(1, 0x80, 0x8f) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

void AppendHexEscape(std::string& out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

}  // namespace

std::string TerminalSafe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = Utf8Length(s, i);
    // C1 controls are U+0080..U+009F: 0xc2 followed by 0x80..0x9f.
    bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) <= 0x9f;
    if (n == 0 || c < 0x20 || c == 0x7f || c1) {
      for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) AppendHexEscape(out, static_cast<unsigned char>(s[i + k]));
      i += std::max<size_t>(n, 1);
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string TerminalSafeLines(std::string_view s) {
  std::string out;
  for (size_t start = 0;;) {
    size_t nl = s.find('\n', start);
    out += TerminalSafe(s.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    if (nl == std::string_view::npos) return out;
    out += '\n';
    start = nl + 1;
  }
}

std::string JoinShell(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    out += ShellQuote(argv[i]);
  }
  return out;
}

std::string FormatBytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  else snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string FormatMib(uint64_t bytes) {
  constexpr uint64_t kMiB = 1 << 20;
  char buf[32];
  if (bytes % kMiB == 0)
    snprintf(buf, sizeof buf, "%" PRIu64 " MiB", bytes / kMiB);
  else
    snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / kMiB);
  return buf;
}

std::string Hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

uint64_t NowNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string FormatNs(uint64_t ns) {
  char buf[32];
  if (ns < 1000) snprintf(buf, sizeof buf, "%llu ns", static_cast<unsigned long long>(ns));
  else if (ns < 1000000) snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  else if (ns < 1000000000) snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  return buf;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

std::string WrapWords(const std::string& value, size_t col, size_t width) {
  size_t room = width > col + 20 ? width - col : 20;
  std::string out, line;
  for (std::string word : Split(value, ' ')) {
    while (word.size() > room) {
      if (!line.empty()) out += line + "\n" + std::string(col, ' '), line.clear();
      size_t cut = word.rfind('/', room - 1);
      cut = cut == std::string::npos || cut == 0 ? room : cut + 1;
      out += word.substr(0, cut) + "\n" + std::string(col, ' ');
      word = word.substr(cut);
    }
    if (!line.empty() && col + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(col, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

void Table::AddRow(std::vector<std::string> shown, std::vector<std::string> raw) {
  shown.resize(cols_.size());
  raw.resize(cols_.size());
  rows_.push_back(std::move(shown));
  raw_.push_back(std::move(raw));
}

namespace {

// `cell` shortened to `width` columns by cutting its middle: the start
// (a path's root) and the end (its file name, kept whole when it fits) are
// what identify it.
std::string CutMiddle(const std::string& cell, size_t width) {
  if (cell.size() <= width) return cell;
  if (width <= 3) return cell.substr(0, width);
  size_t slash = cell.rfind('/'), tail = (width - 3) * 2 / 3;
  if (slash != std::string::npos && cell.size() - slash + 3 <= width) tail = cell.size() - slash;
  size_t head = width - 3 - tail, from = cell.size() - tail;
  auto continuation = [&](size_t i) { return (static_cast<unsigned char>(cell[i]) & 0xC0) == 0x80; };
  while (head > 0 && continuation(head)) --head;  // never half a UTF-8 character
  while (from < cell.size() && continuation(from)) ++from;
  return cell.substr(0, head) + "..." + cell.substr(from);
}

// Narrows the left-aligned columns of `w`, widest first, until the line
// (cells and two spaces between them) fits `width` or none can give more.
void FitColumns(const std::vector<Table::Column>& cols, std::vector<size_t>& w, size_t width) {
  auto total = [&] {
    size_t t = w.empty() ? 0 : 2 * (w.size() - 1);
    for (size_t x : w) t += x;
    return t;
  };
  auto floor = [&](size_t c) { return std::max(cols[c].name.size(), Table::kMinCut); };
  while (total() > width) {
    size_t widest = cols.size();
    for (size_t c = 0; c < cols.size(); ++c)
      if (cols[c].align == Table::Align::kLeft && w[c] > floor(c) && (widest == cols.size() || w[c] > w[widest]))
        widest = c;
    if (widest == cols.size()) return;
    w[widest] = std::max(floor(widest), w[widest] - std::min(w[widest], total() - width));
  }
}

}  // namespace

std::string Table::Text(size_t width) const {
  // Cells come from profiles and plans: a path may hold terminal escapes.
  std::vector<std::vector<std::string>> rows;
  rows.reserve(rows_.size());
  for (auto& r : rows_) {
    std::vector<std::string>& safe = rows.emplace_back();
    for (auto& cell : r) safe.push_back(TerminalSafe(cell));
  }
  std::vector<size_t> w(cols_.size());
  for (size_t c = 0; c < cols_.size(); ++c) {
    w[c] = cols_[c].name.size();
    for (auto& r : rows) w[c] = std::max(w[c], r[c].size());
  }
  FitColumns(cols_, w, width);
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t c = 0; c < cols_.size(); ++c) {
      if (c) l += "  ";
      std::string cell = CutMiddle(cells[c], w[c]);
      size_t pad = w[c] - cell.size();
      bool last = c + 1 == cols_.size();
      if (cols_[c].align == Align::kRight) l += std::string(pad, ' ') + cell;
      else l += cell + (last ? "" : std::string(pad, ' '));
    }
    out += l + "\n";
  };
  std::vector<std::string> hdr;
  for (auto& c : cols_) hdr.push_back(c.name);
  line(hdr);
  for (auto& r : rows) line(r);
  return out;
}

nlohmann::ordered_json Table::JsonRows() const {
  using Json = nlohmann::ordered_json;
  Json rows = Json::array();
  for (const std::vector<std::string>& raw : raw_) {
    Json& row = rows.emplace_back(Json::object());
    for (size_t c = 0; c < cols_.size(); ++c) {
      // A numeric cell holds a number literal (or null) as text; anything
      // else there is kept as the string it is.
      Json v(Json::value_t::discarded);
      if (cols_[c].numeric && !raw[c].empty()) v = Json::parse(raw[c], nullptr, false);
      row[cols_[c].json_key] = v.is_number() || v.is_null() ? std::move(v) : Json(raw[c]);
    }
  }
  return rows;
}

std::string Table::Json() const { return JsonDocument(JsonRows()); }

}  // namespace syspgo
