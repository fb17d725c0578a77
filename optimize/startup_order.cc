//===- startup_order.cc - link a cold start's text pages together ----------===//
#include "optimize/startup_order.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <set>

#include "analyze/sample_set.h"

namespace syspgo {

Result<StartupOrder> StartupOrderFromPlan(const Plan& plan, const std::string& binary) {
  struct stat st{};
  if (stat(binary.c_str(), &st) != 0)
    return MakeError("cannot read the binary '" + binary + "': give the program whose cold start the run recorded");
  std::error_code ec;
  std::string real = std::filesystem::weakly_canonical(binary, ec).string();
  const PlanFile* file = nullptr;
  for (const PlanFile& f : plan.files)
    if ((f.fingerprint.device == st.st_dev && f.fingerprint.inode == st.st_ino) || f.path == real) {
      file = &f;
      break;
    }
  if (!file)
    return MakeError("the run read no page of '" + binary + "': record its cold start (syspgo collect --cold "
                     "--no-readahead -- " + binary + " ...) and pass the binary that ran");
  auto functions = ReadElfFunctions(binary);
  if (!functions) return functions.error();
  if (functions->empty())
    return MakeError("'" + binary + "' has no function symbols to order; link it without -s (strip it afterwards)");
  // Page -> the functions with code on it, in address order.
  std::map<uint64_t, std::vector<size_t>> on_page;
  for (size_t i = 0; i < functions->size(); ++i) {
    const ElfFunction& f = (*functions)[i];
    for (uint64_t p = f.offset / kPlanPageSize; p <= (f.offset + f.size - 1) / kPlanPageSize; ++p)
      on_page[p].push_back(i);
  }
  StartupOrder out;
  std::set<std::string> placed;  // a name twice (two static functions) is ordered once
  for (const PlanExtent& e : file->extents) {  // first-touch order
    for (uint64_t p = e.offset / kPlanPageSize; p < (e.offset + e.length) / kPlanPageSize; ++p) {
      ++out.pages;
      auto it = on_page.find(p);
      if (it == on_page.end()) continue;
      ++out.text_pages;
      for (size_t i : it->second)
        if (placed.insert((*functions)[i].name).second) out.symbols.push_back((*functions)[i].name);
    }
  }
  return out;
}

std::string StartupOrderText(const StartupOrder& order) {
  std::string text;
  for (const std::string& s : order.symbols) text += s + "\n";
  return text;
}

}  // namespace syspgo
