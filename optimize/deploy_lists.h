//===- deploy_lists.h - image sort lists and prefetch path lists ------------===//
//
// The same first-touch order that drives `syspgo prefetch` also helps when
// the program ships inside an image: a squashfs image built with
// `mksquashfs -sort` stores first-touched files first, so a cold start reads
// the image front to back, and lazy-pulling image formats (Nydus, eStargz)
// fetch the listed files first. These emitters turn a Plan into those lists.
// Output is deterministic: the same plan gives the same bytes.
#pragma once
#include <string>
#include <vector>

#include "common/result.h"
#include "optimize/plan.h"

namespace syspgo {

// The path of `path` inside `root` ("" when it is not inside), with no
// leading slash. Both are absolute; neither is resolved on disk.
std::string PathInside(const std::string& root, const std::string& path);

struct DeployList {
  std::string text;                 // the file's contents
  size_t listed = 0;                // lines in `text`
  std::vector<std::string> left_out;  // "PATH: why" for each plan file not listed
};

// A `mksquashfs SOURCE_DIR IMAGE -sort FILE` sort file: one line per plan
// file under `source_dir` (absolute), "relative/path priority", first-touched
// first with the highest priority. Files outside `source_dir` are left out:
// they are not in the image.
Result<DeployList> SquashfsSortList(const Plan& plan, const std::string& source_dir);

// Absolute paths inside the image, one per line, in first-touch order, as
// Nydus (`nydus-image create --prefetch-policy fs`) reads them. `image_root`
// is the directory that becomes "/" in the image; with "/" the plan's paths
// are listed as they are.
Result<DeployList> PrefetchPathList(const Plan& plan, const std::string& image_root = "/");

// A plan recorded where a program's files lie in a directory, made to
// replay the image of that directory mounted at another place. Plans name
// files by absolute path and check each against its fingerprint; an image's
// copy of a file has another device and inode (and, in squashfs, whole
// seconds for its time), so moving the paths is not enough. Each path under
// `from` becomes the same path under `to` and is fingerprinted there; it is
// kept if the file there has the same size and sampled contents, else left
// out (with why). Lookups under `from` move too. Files and lookups elsewhere
// (the host's libraries of a program run from the image) stay as they are.
struct RelocatedPlan {
  Plan plan;
  size_t moved = 0;                   // files now under `to`
  std::vector<std::string> left_out;  // "PATH: why" for each file dropped
};
Result<RelocatedPlan> RelocatePlan(const Plan& plan, const std::string& from, const std::string& to);

}  // namespace syspgo
