//===- folded.cc - CPU samples as folded stacks --------------------------===//
#include "optimize/folded.h"

#include "common/files.h"

#include <map>

namespace syspgo {
namespace {

class FoldedEmitter : public ProfileEmitter {
 public:
  Status Write(const Profile& p, uint32_t binary, const std::string& path) const override {
    std::map<std::string, uint64_t> lines;
    for (const ProfileSample& s : p.samples) {
      if (!SampleTouches(p, s, binary)) continue;
      auto comm = p.comm.find(s.pid);
      std::string line = comm != p.comm.end() ? comm->second : "pid " + std::to_string(s.pid);
      for (auto it = s.stack.rbegin(); it != s.stack.rend(); ++it) {
        const Location& l = p.locations[*it];
        std::string suffix = l.binary == kKernelBinary ? "_[k]" : "";
        if (l.frames.empty()) line += ";" + p.DisplayName(l) + suffix;
        for (auto f = l.frames.rbegin(); f != l.frames.rend(); ++f)
          line += ";" + p.functions[f->function].display + suffix;
      }
      lines[line] += s.count;
    }
    if (lines.empty()) return MakeError("no sample of the run touches " + p.BinaryName(binary) + "; nothing to write.");
    std::string out;
    for (const auto& [l, n] : lines) out += l + " " + std::to_string(n) + "\n";
    return WriteFileAtomically(path, out);
  }
};

}  // namespace

std::unique_ptr<ProfileEmitter> MakeFoldedEmitter() { return std::make_unique<FoldedEmitter>(); }

}  // namespace syspgo
