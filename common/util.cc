//===- util.cc - text helpers shared by every stage ----------------------===//
#include "common/util.h"

#include <algorithm>
#include <fstream>
#include <cstdio>
#include <sstream>

namespace syspgo {

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

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

void Table::AddRow(std::vector<std::string> shown, std::vector<std::string> raw) {
  shown.resize(cols_.size());
  raw.resize(cols_.size());
  rows_.push_back(std::move(shown));
  raw_.push_back(std::move(raw));
}

std::string Table::Text() const {
  std::vector<size_t> w(cols_.size());
  for (size_t c = 0; c < cols_.size(); ++c) {
    w[c] = cols_[c].name.size();
    for (auto& r : rows_) w[c] = std::max(w[c], r[c].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t c = 0; c < cols_.size(); ++c) {
      if (c) l += "  ";
      size_t pad = w[c] - cells[c].size();
      bool last = c + 1 == cols_.size();
      if (cols_[c].align == Align::kRight) l += std::string(pad, ' ') + cells[c];
      else l += cells[c] + (last ? "" : std::string(pad, ' '));
    }
    out += l + "\n";
  };
  std::vector<std::string> hdr;
  for (auto& c : cols_) hdr.push_back(c.name);
  line(hdr);
  for (auto& r : rows_) line(r);
  return out;
}

std::string Table::Json() const {
  std::string out = "[";
  for (size_t i = 0; i < raw_.size(); ++i) {
    out += i ? ",\n {" : "\n {";
    for (size_t c = 0; c < cols_.size(); ++c) {
      if (c) out += ", ";
      out += "\"" + cols_[c].json_key + "\": ";
      if (cols_[c].numeric && !raw_[i][c].empty()) out += raw_[i][c];
      else out += "\"" + JsonEscape(raw_[i][c]) + "\"";
    }
    out += "}";
  }
  out += raw_.empty() ? "]\n" : "\n]\n";
  return out;
}

}  // namespace syspgo
