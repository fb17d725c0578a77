//===- stack_names.cc - recorded stacks as function names ----------------===//
// Stacks are read one id at a time and cached: a stall report names a few
// dozen stacks, a folded off-CPU profile a few thousand, never the whole
// stack table. A user address is resolved with the mapping its process had
// at the time (the latest one first seen by then, else the first seen
// after: the cpu group records a mapping when it first samples it, which
// can be after an off-CPU interval in it).
#include "analyze/stack_names.h"

#include <cstring>

#include "analyze/symbolize.h"
#include "common/util.h"

namespace syspgo {
namespace {



std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string ShortFunctionName(const std::string& demangled) {
  std::string s = demangled;
  for (const char* q : {" const", " volatile", " &&", " &", " noexcept"}) {
    if (s.size() > strlen(q) && s.ends_with(q)) s.resize(s.size() - strlen(q));
  }
  if (!s.ends_with(")")) return s;
  int depth = 0;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') ++depth;
    else if (s[i] == '(' && --depth == 0) return i ? s.substr(0, i) : s;
  }
  return s;
}

StackNames::StackNames(Db& db, int64_t run_id) : db_(db), run_id_(run_id), sym_(std::make_unique<Symbolizer>()) {}
StackNames::~StackNames() = default;

Result<std::unique_ptr<StackNames>> StackNames::Load(Db& db, int64_t run_id) {
  std::unique_ptr<StackNames> n(new StackNames(db, run_id));
  auto ks = ReadKallsyms(db, run_id);
  if (!ks) return ks.error();
  if (*ks) {
    n->sym_->SetKallsyms(**ks);
    n->has_kallsyms_ = true;
  }
  auto maps = ReadMappings(db, run_id);
  if (!maps) return maps.error();
  n->maps_ = std::move(*maps);
  return n;
}

const std::vector<uint64_t>& StackNames::Frames(int64_t id) {
  auto [it, fresh] = frames_.try_emplace(id);
  if (!fresh || id == 0) return it->second;
  auto frames = ReadStack(db_, run_id_, id);
  if (frames.ok()) it->second = std::move(*frames);  // an unreadable stack shows as an empty one
  return it->second;
}

std::vector<std::string> StackNames::Kernel(int64_t id) {
  std::vector<std::string> out;
  for (uint64_t a : Frames(id)) {
    std::string name = sym_->KernelName(a);
    out.push_back(name.empty() ? Hex(a) : name);
  }
  size_t skip = 0;
  for (size_t i = 0; i < out.size() && i < kProbeFramesMax; ++i)
    if (IsProbeFrame(out[i])) skip = i + 1;
  out.erase(out.begin(), out.begin() + static_cast<long>(skip));
  return out;
}

std::vector<std::string> StackNames::User(int64_t id, int64_t pid, int64_t ts) {
  std::vector<std::string> out;
  const std::vector<uint64_t>& frames = Frames(id);
  for (size_t i = 0; i < frames.size() && frames[i] < kUserAddressLimit; ++i) {
    // Every frame but the first is a return address: the call is the
    // instruction before it, which may belong to another (inlined) function.
    // One outside its binary's code ends the stack, as in a profile
    // (Symbolizer::NotCode: a frame-pointer walk that went astray).
    if (i > 0 && NotCode(frames[i], pid, ts)) break;
    for (std::string& f : UserFrame(frames[i], i > 0, pid, ts)) out.push_back(std::move(f));
  }
  return out;
}

// The latest mapping of `addr` seen by `ts`, else the first seen after.
const MappingRow* StackNames::MappingAt(uint64_t addr, int64_t pid, int64_t ts) const {
  const MappingRow* best = nullptr;
  auto it = maps_.find(pid);
  if (it == maps_.end()) return nullptr;
  for (const MappingRow& m : it->second) {
    if (m.start > addr) break;
    if (addr >= m.end) continue;
    bool better = !best || (m.ts <= ts ? (best->ts > ts || m.ts > best->ts) : (best->ts > ts && m.ts < best->ts));
    if (better) best = &m;
  }
  return best;
}

bool StackNames::NotCode(uint64_t addr, int64_t pid, int64_t ts) {
  const MappingRow* m = MappingAt(addr, pid, ts);
  if (!m || m->path.empty() || m->path[0] != '/') return false;
  BinaryRef ref{m->path, m->build_id};
  return sym_->Open(ref).problem.empty() && sym_->NotCode(ref, addr - m->start + m->file_off);
}

StackNames::FunctionAt StackNames::UserFunction(uint64_t addr, int64_t pid, int64_t ts) {
  const MappingRow* m = MappingAt(addr, pid, ts);
  if (!m) return {};
  FunctionAt out{"", m->path.empty() ? "[anon]" : Basename(m->path)};
  if (m->path.empty() || m->path[0] != '/') return out;
  BinaryRef ref{m->path, m->build_id};
  uint64_t vaddr = 0;
  if (!sym_->Open(ref).problem.empty() || !sym_->ToVaddr(ref, addr - m->start + m->file_off, &vaddr)) return out;
  const AddressInfo* info = sym_->Lookup(ref, vaddr);
  if (!info) return out;
  // The ELF symbol is the function the CPU was in; an inlined frame's name
  // would split one function's time among its helpers.
  if (!info->symbol.empty()) out.function = ShortFunctionName(Demangle(info->symbol));
  else if (!info->frames.empty()) out.function = ShortFunctionName(Demangle(info->frames.back().function));
  else if (info->unnamed_start) out.function = out.binary + "+" + Hex(info->unnamed_start);
  return out;
}

std::string StackNames::KernelFunction(uint64_t addr) const { return sym_->KernelName(addr); }

std::vector<std::string> StackNames::UserFrame(uint64_t addr, bool return_address, int64_t pid, int64_t ts) {
  const MappingRow* best = MappingAt(addr, pid, ts);
  if (!best) return {Hex(addr)};
  uint64_t off = addr - best->start + best->file_off;
  std::string fallback = (best->path.empty() ? "[anon]" : Basename(best->path)) + "+" + Hex(off);
  if (best->path.empty() || best->path[0] != '/') return {fallback};
  BinaryRef ref{best->path, best->build_id};
  uint64_t vaddr = 0;
  if (!sym_->Open(ref).problem.empty() || !sym_->ToVaddr(ref, off, &vaddr)) return {fallback};
  const AddressInfo* info = sym_->Lookup(ref, return_address ? vaddr - 1 : vaddr);
  if (info && info->frames.empty() && info->unnamed_start)  // a stripped binary's: named as `analyze hot` does
    return {(best->path.empty() ? "[anon]" : Basename(best->path)) + "+" + Hex(info->unnamed_start)};
  if (!info || info->frames.empty()) return {fallback};
  std::vector<std::string> names;
  for (const AddressInfo::Frame& f : info->frames)
    if (!f.function.empty()) names.push_back(ShortFunctionName(Demangle(f.function)));
  if (names.empty()) return {fallback};
  return names;
}

}  // namespace syspgo
