//===- erofs_image_input.cc - the EROFS layout on an image from outside ---===//
// `syspgo optimize --emit erofs` lays out the image mkfs.erofs made, but
// LayOutErofsImage takes any file (optimize/erofs_image.h), so the bytes
// are an image as someone else could hand it over, laid out with the plan
// the seeds were made for (fuzz/make_corpus.py erofs_seeds). A refusal must
// name the image and leave no output; an accepted image must come out the
// same size (the layout only moves blocks) and, laid out again, place the
// same blocks: what the layout writes is an image it reads.
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/fuzz_inputs.h"
#include "optimize/erofs_image.h"
#include "optimize/plan.h"

namespace syspgo::fuzz {
namespace {

// Scattered pages of the seeds' two files, the second in a subdirectory,
// and a file the seeds do not have.
Plan SeedPlan() {
  Plan plan;
  plan.files.push_back({"/r/a.txt", {}, {{8192, 4096, 1}, {0, 4096, 3}}});
  plan.files.push_back({"/r/lib/b.txt", {}, {{0, 4096, 2}}});
  plan.files.push_back({"/r/missing", {}, {{0, 4096, 4}}});
  return plan;
}

}  // namespace

std::string ErofsImageInput(const uint8_t* data, size_t size) {
  const std::string image = ScratchInput("image.erofs", data, size);
  const std::string out = ScratchPath("laid.erofs"), again_out = ScratchPath("again.erofs");
  unlink(out.c_str());
  const Plan plan = SeedPlan();
  auto laid = LayOutErofsImage(image, out, plan, "/r");
  if (!laid) {
    if (access(out.c_str(), F_OK) == 0) return "LayOutErofsImage refused the image but left an output";
    return MustName(laid.error().message, image, "LayOutErofsImage");
  }
  struct stat st {};
  if (stat(out.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != size)
    return "the laid-out image is not the size of the image it was made from";
  auto again = LayOutErofsImage(out, again_out, plan, "/r");
  if (!again) return "the layout's own output was refused: " + again.error().message;
  if (again->files_placed != laid->files_placed || again->files_flat != laid->files_flat ||
      again->blocks_placed != laid->blocks_placed || again->data_blocks != laid->data_blocks)
    return "laying out the layout's output again placed other files or blocks";
  return "";
}

}  // namespace syspgo::fuzz
