//===- report_common.h - helpers the HTML report and trace export share --===//
// Both outputs are JSON read by a browser (the report embeds it in a
// <script> element, the trace is opened by Perfetto or chrome://tracing),
// both draw block requests of one device without overlap, and both name
// threads and off-CPU states the same way. Keeping that here makes the two
// views of one run agree.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

// A JSON string literal, quotes included. Bytes that are not valid UTF-8
// become U+FFFD (paths are bytes; JSON parsers reject them otherwise), and
// '<' becomes \u003c so that the text can sit inside an HTML <script>
// element without "</script>" or "<!--" ever appearing in it.
std::string JsonQuote(std::string_view s);

// Builds JSON text in one pass, inserting the commas.
class JsonWriter {
 public:
  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  JsonWriter& Key(std::string_view k);
  JsonWriter& Str(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Num(double v);  // finite values only; others are written as 0
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  JsonWriter& Raw(std::string_view literal);  // a value already in JSON form
  // Shorthands for an object member.
  JsonWriter& Field(std::string_view k, std::string_view v) { return Key(k).Str(v); }
  JsonWriter& Field(std::string_view k, const char* v) { return Key(k).Str(v); }
  JsonWriter& Field(std::string_view k, int64_t v) { return Key(k).Int(v); }
  JsonWriter& Field(std::string_view k, double v) { return Key(k).Num(v); }
  std::string& str() { return out_; }

 private:
  JsonWriter& Open(char c);
  JsonWriter& Close(char c);
  void Separate();
  std::string out_;
  std::vector<bool> has_items_;  // per open container: an item was written
  bool after_key_ = false;
};

// Interns strings as indices into one table, so repeated labels (syscall
// names, paths) are sent once.
class StringTable {
 public:
  int64_t Index(const std::string& s);
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int64_t> index_;
};

// Lanes for intervals that may overlap (block requests of one device in
// flight together): each interval gets the lowest lane whose previous
// interval has ended, so no two in one lane overlap. Intervals must come
// in order of start; the same order always gives the same lanes.
class LaneAssigner {
 public:
  int Add(int64_t ts, int64_t dur);
  int lanes() const { return static_cast<int>(lane_end_.size()); }

 private:
  std::vector<int64_t> lane_end_;  // end of the last interval in each lane
};

// What an offcpu.state value means, for people: "S (sleeping)", ...
std::string OffCpuStateName(int64_t state);

// True if the database has a table or view of that name. Tables added by a
// later probe group may be missing from databases written before it.
bool HasTable(Db& db, const std::string& name);

}  // namespace syspgo
