//===- startup_order.h - link a cold start's text pages together -----------===//
//
// A cold start faults in the text pages it runs, wherever the linker put
// its functions: a few hundred functions spread over thousands of pages
// each bring a page (and, with readahead, a window around it) from disk.
// From the pages a cold run of the binary first touched (its prefetch
// plan), this orders their functions for `ld.lld --symbol-ordering-file`
// (compile with -ffunction-sections): the pages in first-touch order, the
// functions of each page in address order. Relinked, the start's functions
// lie together at the front of the text, so the start touches fewer pages
// and the plan's extents merge. The functions of a page the start touched
// but did not run (its neighbours on the page) come along: the plan knows
// pages, not functions.
#pragma once
#include <string>
#include <vector>

#include "common/result.h"
#include "optimize/plan.h"

namespace syspgo {

struct StartupOrder {
  std::vector<std::string> symbols;  // placement order
  size_t pages = 0;                  // pages of the binary the plan holds
  size_t text_pages = 0;             // of them, pages with code of a function
};

// The order for `binary`, found in `plan` as the same file (device and
// inode) or the same path. An error names the binary when the plan holds no
// page of it, or when it has no symbol table to name its functions by.
Result<StartupOrder> StartupOrderFromPlan(const Plan& plan, const std::string& binary);

// One symbol a line, as ld.lld reads it.
std::string StartupOrderText(const StartupOrder& order);

}  // namespace syspgo
