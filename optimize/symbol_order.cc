//===- symbol_order.cc - linker symbol order from the sampled call graph -===//
// The graph has the binary's ELF function symbols as nodes (inlined code is
// part of the function it was inlined into: that is what the linker moves)
// and caller -> callee edges from adjacent frames of each stack, weighted
// by samples. Without LBR the weights measure time below the call, not
// calls; C3 only needs to know which caller matters most to each function.
#include "optimize/symbol_order.h"

#include "common/files.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace syspgo {

std::vector<uint32_t> CallChainOrder(const std::vector<OrderNode>& nodes, const std::vector<OrderEdge>& edges) {
  struct Cluster {
    std::vector<uint32_t> members;
    uint64_t size = 0, samples = 0;
    double Density() const { return static_cast<double>(samples) / static_cast<double>(std::max<uint64_t>(size, 1)); }
  };
  std::vector<Cluster> clusters(nodes.size());
  std::vector<uint32_t> cluster_of(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    clusters[i] = {{i}, std::max<uint64_t>(nodes[i].size, 1), nodes[i].samples};
    cluster_of[i] = i;
  }
  // The heaviest caller of each function (ties: the caller's name).
  std::vector<int64_t> best(nodes.size(), -1);
  std::vector<uint64_t> best_w(nodes.size(), 0);
  for (const OrderEdge& e : edges) {
    if (e.caller == e.callee || e.weight == 0) continue;
    bool better = e.weight > best_w[e.callee] ||
                  (e.weight == best_w[e.callee] && best[e.callee] >= 0 && nodes[e.caller].name < nodes[best[e.callee]].name);
    if (better) {
      best[e.callee] = e.caller;
      best_w[e.callee] = e.weight;
    }
  }
  std::vector<uint32_t> by_heat(nodes.size());
  std::iota(by_heat.begin(), by_heat.end(), 0u);
  std::sort(by_heat.begin(), by_heat.end(), [&](uint32_t a, uint32_t b) {
    return nodes[a].samples != nodes[b].samples ? nodes[a].samples > nodes[b].samples : nodes[a].name < nodes[b].name;
  });
  for (uint32_t f : by_heat) {
    if (best[f] < 0) continue;
    uint32_t cf = cluster_of[f], cp = cluster_of[static_cast<uint32_t>(best[f])];
    if (cf == cp) continue;
    Cluster &into = clusters[cp], &from = clusters[cf];
    if (into.size + from.size > kMaxClusterBytes) continue;
    // A cold callee appended to a dense cluster would spread its hot code
    // over more pages than it saves (hfsort's density check).
    Cluster merged{{}, into.size + from.size, into.samples + from.samples};
    if (merged.Density() * 8 < into.Density()) continue;
    for (uint32_t m : from.members) cluster_of[m] = cp;
    into.members.insert(into.members.end(), from.members.begin(), from.members.end());
    into.size = merged.size;
    into.samples = merged.samples;
    from.members.clear();
  }
  std::vector<uint32_t> order_of_clusters;
  for (uint32_t c = 0; c < clusters.size(); ++c)
    if (!clusters[c].members.empty()) order_of_clusters.push_back(c);
  std::sort(order_of_clusters.begin(), order_of_clusters.end(), [&](uint32_t a, uint32_t b) {
    const Cluster &x = clusters[a], &y = clusters[b];
    if (x.Density() != y.Density()) return x.Density() > y.Density();
    if (x.samples != y.samples) return x.samples > y.samples;
    return nodes[x.members[0]].name < nodes[y.members[0]].name;
  });
  std::vector<uint32_t> out;
  for (uint32_t c : order_of_clusters) out.insert(out.end(), clusters[c].members.begin(), clusters[c].members.end());
  return out;
}

namespace {

class SymbolOrderEmitter : public ProfileEmitter {
 public:
  Status Write(const Profile& p, uint32_t binary, const std::string& path) const override {
    SYSPGO_TRY(CheckBinary(p, binary, "a symbol order"));
    const ProfileBinary& b = p.binaries[binary];
    std::vector<OrderNode> nodes;
    std::map<int32_t, uint32_t> node_of;  // symbol -> node
    auto node = [&](int32_t sym) {
      auto [it, fresh] = node_of.try_emplace(sym, static_cast<uint32_t>(nodes.size()));
      if (fresh) nodes.push_back({p.symbols[sym].name, p.symbols[sym].size, 0});
      return it->second;
    };
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> weights;
    for (const ProfileSample& s : p.samples) {
      std::set<std::pair<uint32_t, uint32_t>> seen;
      for (size_t i = s.first_user; i < s.stack.size(); ++i) {
        const Location& l = p.locations[s.stack[i]];
        if (l.binary != binary || l.symbol < 0) continue;
        uint32_t n = node(l.symbol);
        if (s.UserIp(i)) nodes[n].samples += s.count;
        if (i == s.first_user) continue;
        const Location& callee = p.locations[s.stack[i - 1]];
        if (callee.binary != binary || callee.symbol < 0) continue;
        auto e = std::make_pair(n, node(callee.symbol));
        if (seen.insert(e).second) weights[e] += s.count;
      }
    }
    if (nodes.empty())
      return MakeError("no sampled address of the run falls in a function of " + b.ref.path +
                       "; nothing to order. Was it running during the collection?");
    std::vector<OrderEdge> edges;
    for (const auto& [e, w] : weights) edges.push_back({e.first, e.second, w});
    std::string out;
    for (uint32_t n : CallChainOrder(nodes, edges)) out += nodes[n].name + "\n";
    return WriteFileAtomically(path, out);
  }
};

}  // namespace

std::unique_ptr<ProfileEmitter> MakeSymbolOrderEmitter() { return std::make_unique<SymbolOrderEmitter>(); }

}  // namespace syspgo
