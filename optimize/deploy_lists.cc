//===- deploy_lists.cc - image sort lists and prefetch path lists -----------===//
//
// Facts about the consumers that shape these files (squashfs-tools 4.5.1,
// sort.c): a sort-file name ends at the first unescaped white space, and a
// backslash escapes the next character; a line whose first non-blank
// character is '#' is a comment; a name starting with "/", "./" or "../" is
// taken relative to the current directory instead of the source; priorities
// must lie in -32768..32767, and files not listed get priority 0. A name
// cannot contain a newline in either format, so such files are left out.
#include "optimize/deploy_lists.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace syspgo {
namespace {

constexpr int kTopPriority = 32767;
// Listed files stay above the unlisted ones (priority 0) however many there are.
constexpr int kLowestListedPriority = 1;

std::string EscapeSortName(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '\\' || std::isspace(static_cast<unsigned char>(c)) || (out.empty() && c == '#')) out += '\\';
    out += c;
  }
  return out;
}

Status CheckRoot(const std::string& dir, const char* what) {
  if (dir.empty() || dir[0] != '/')
    return MakeError(std::string(what) + " '" + dir + "' must be an absolute path, like the paths in the plan");
  return {};
}

template <typename LineFn>
DeployList Emit(const Plan& plan, const std::string& root, LineFn line) {
  DeployList out;
  for (const PlanFile& f : plan.files) {
    std::string rel = PathInside(root, f.path);
    if (rel.empty()) out.left_out.push_back(f.path + ": not under " + root);
    else if (rel.find('\n') != std::string::npos) out.left_out.push_back(f.path + ": the name contains a newline");
    else out.text += line(rel, out.listed++) + "\n";
  }
  return out;
}

}  // namespace

std::string PathInside(const std::string& root, const std::string& path) {
  namespace fs = std::filesystem;
  std::string r = fs::path(root).lexically_normal().string();
  std::string p = fs::path(path).lexically_normal().string();
  if (r.size() > 1 && r.back() == '/') r.pop_back();
  if (r == "/") return p.size() > 1 ? p.substr(1) : "";
  if (p.size() <= r.size() + 1 || p.compare(0, r.size(), r) != 0 || p[r.size()] != '/') return "";
  return p.substr(r.size() + 1);
}

Result<DeployList> SquashfsSortList(const Plan& plan, const std::string& source_dir) {
  SYSPGO_TRY(CheckRoot(source_dir, "the mksquashfs source directory"));
  return Emit(plan, source_dir, [](const std::string& rel, size_t rank) {
    long priority = std::max<long>(kLowestListedPriority, kTopPriority - static_cast<long>(rank));
    return EscapeSortName(rel) + " " + std::to_string(priority);
  });
}

Result<DeployList> PrefetchPathList(const Plan& plan, const std::string& image_root) {
  SYSPGO_TRY(CheckRoot(image_root, "the image root"));
  return Emit(plan, image_root, [](const std::string& rel, size_t) { return "/" + rel; });
}

Result<RelocatedPlan> RelocatePlan(const Plan& plan, const std::string& from, const std::string& to) {
  SYSPGO_TRY(CheckRoot(from, "the directory the plan was recorded in"));
  SYSPGO_TRY(CheckRoot(to, "the place the image is mounted"));
  std::string dest = std::filesystem::path(to).lexically_normal().string();
  if (dest.size() > 1 && dest.back() == '/') dest.pop_back();
  auto moved_path = [&](const std::string& path) {
    std::string rel = PathInside(from, path);
    return rel.empty() ? std::string() : (dest == "/" ? "" : dest) + "/" + rel;
  };
  RelocatedPlan out;
  out.plan.format_version = plan.format_version;
  out.plan.creation = plan.creation;
  for (const PlanFile& f : plan.files) {
    std::string path = moved_path(f.path);
    if (path.empty()) {
      out.plan.files.push_back(f);
      continue;
    }
    auto fp = ComputeFingerprint(path);
    if (!fp.ok()) {
      out.left_out.push_back(path + ": " + fp.error().message);
      continue;
    }
    // Device, inode and times are the copy's own; the bytes must be the same.
    if (fp->size != f.fingerprint.size || fp->checksum != f.fingerprint.checksum) {
      out.left_out.push_back(path + ": not the same contents as " + f.path + " (" +
                             (fp->size != f.fingerprint.size ? "size " + std::to_string(f.fingerprint.size) + " -> " +
                                                                   std::to_string(fp->size) + " bytes"
                                                             : std::string("sampled contents differ")) +
                             ")");
      continue;
    }
    out.plan.files.push_back({path, *fp, f.extents});
    ++out.moved;
  }
  for (const PlanLookup& l : plan.lookups) {
    std::string path = moved_path(l.path);
    out.plan.lookups.push_back({path.empty() ? l.path : path, l.first_touch_ns});
  }
  return out;
}

}  // namespace syspgo
