//===- EGraph.cpp - Symbols and e-node hashing ----------------------------===//
//
// The non-template parts of the e-graph; the EGraph<A> methods are templates
// in EGraphImpl.h.
//
//===----------------------------------------------------------------------===//
#include "neo/EqSat/EGraph.h"

#include <cassert>

using namespace neo::eqsat;

Symbol SymbolTable::intern(std::string_view name) {
  auto it = ids.find(name);
  if (it != ids.end())
    return it->second;
  Symbol symbol = static_cast<Symbol>(names.size());
  names.emplace_back(name);
  ids.emplace(std::string_view(names.back()), symbol);
  return symbol;
}

std::string_view SymbolTable::name(Symbol symbol) const {
  assert(symbol < names.size() && "unknown symbol");
  if (symbol >= names.size())
    return {};
  return names[symbol];
}

std::optional<Symbol> SymbolTable::lookup(std::string_view name) const {
  auto it = ids.find(name);
  if (it == ids.end())
    return std::nullopt;
  return it->second;
}

namespace {
/// splitmix64's finalizer: a cheap bijective mixer.
inline uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
} // namespace

size_t ENodeHash::operator()(const ENode &n) const {
  uint64_t h = mix(n.op + kGolden);
  h = mix(h + n.data + kGolden);
  for (Id child : n.children)
    h = mix(h + child + kGolden);
  return static_cast<size_t>(h + n.children.size());
}
