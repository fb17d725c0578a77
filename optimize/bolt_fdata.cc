//===- bolt_fdata.cc - BOLT profiles (no_lbr fdata) from stack samples ---===//
// The no_lbr form is what an IP sampler can say: per function and offset,
// how many samples landed there; BOLT turns these into block counts and
// infers edges. Besides each sample's IP, every caller frame adds the
// sample at its call instruction (return address - 1): a block that calls
// hot code is hot even when it rarely holds the IP, and BOLT would
// otherwise split it out as cold. Each frame counts once per sample.
#include "optimize/bolt_fdata.h"

#include "common/files.h"

#include <cinttypes>
#include <map>
#include <set>

namespace syspgo {
namespace {

class BoltFdataEmitter : public ProfileEmitter {
 public:
  Status Write(const Profile& p, uint32_t binary, const std::string& path) const override {
    SYSPGO_TRY(CheckBinary(p, binary, "a BOLT profile", &ProfileBinary::has_symtab,
                           " has no symbol table (.symtab): BOLT matches profiles to functions by the symbol names "
                           "of the binary it rewrites, and rewrites only unstripped binaries. Pass the unstripped "
                           "binary (linked with -Wl,--emit-relocs) as --binary."));
    const ProfileBinary& b = p.binaries[binary];
    std::map<std::pair<std::string, uint64_t>, uint64_t> counts;
    for (const ProfileSample& s : p.samples) {
      std::set<uint32_t> seen;
      for (size_t i = s.first_user; i < s.stack.size(); ++i) {
        const Location& l = p.locations[s.stack[i]];
        if (l.binary != binary || l.symbol < 0 || !seen.insert(s.stack[i]).second) continue;
        const Symbol& sym = p.symbols[l.symbol];
        uint64_t at = l.return_address ? l.address - 1 : l.address;
        counts[{sym.bolt_name, at - sym.start}] += s.count;
      }
    }
    if (counts.empty())
      return MakeError("no sampled address of the run falls in a function of " + b.ref.path +
                       "; nothing to write. Was it running during the collection?");
    std::string out = "no_lbr cpu-clock:\n";
    char line[64];
    for (const auto& [key, n] : counts) {
      snprintf(line, sizeof line, " %" PRIx64 " %" PRIu64 "\n", key.second, n);
      out += "1 " + key.first + line;
    }
    return WriteFileAtomically(path, out);
  }
};

}  // namespace

std::unique_ptr<ProfileEmitter> MakeBoltFdataEmitter() { return std::make_unique<BoltFdataEmitter>(); }

}  // namespace syspgo
