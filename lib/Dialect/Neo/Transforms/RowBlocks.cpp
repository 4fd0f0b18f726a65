//===- RowBlocks.cpp - Row-blocked kernels after extraction ---------------===//
//
// After neo-eqsat-fuse extracts a graph, kernels that share their leading
// parallel dim (the rows: batch, sequence, channel) and pass values to each
// other row by row are grouped into one row-blocked `neo.fused` kernel: for
// each block of rows every op computes its rows in turn, so the values passed
// between them stay in cache and only the group's results are written. A
// softmax (max, exp-sum, normalize) or a layernorm forward and backward then
// read their input once per row block instead of once per kernel.
//
// This is a scheduling step on the extracted graph, not a rewrite explored in
// the e-graph: it never recomputes anything and never changes an op, so it
// removes traffic and launches whatever the extraction chose. A kernel may
// join a group when all its reads of the group's values are row-local and
// the operands it reads whole (a GEMM's weights) fit in cache, since every
// block reads them again.
//
//===----------------------------------------------------------------------===//
#include "FusionTemplates.h"
#include "KernelCost.h"

#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>
#include <iterator>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::fusion;

namespace {

/// One read of a top-level kernel: the member op that reads, its read index
/// and the operand of the kernel that it reads.
struct UnitRead {
  ComputeOp member;
  unsigned read;
  unsigned operand;
};

/// A top-level kernel: a neo.compute or a horizontal neo.fused.
struct Unit {
  Operation *op;
  SmallVector<ComputeOp> members;
  SmallVector<UnitRead> reads;
  SmallVector<UnitRead> indexReads; // index tensors: always read from outside
  int64_t extent = 0; // 0: cannot join a row-blocked kernel
};

class RowGrouper {
public:
  RowGrouper(func::FuncOp func, const RowBlockOptions &options) : func(func), options(options) {}

  unsigned run();

private:
  void collect();
  bool internalReadsOk(ArrayRef<unsigned> group);
  bool reaches(ArrayRef<unsigned> from, ArrayRef<unsigned> to);
  Value valueOf(unsigned u, const UnitRead &r) { return units[u].op->getOperand(r.operand); }
  unsigned find(unsigned u) {
    while (parent[u] != u)
      u = parent[u] = parent[parent[u]];
    return u;
  }
  bool tryMerge(unsigned a, unsigned b);
  /// The estimated GPU time of `group` as one kernel (a unit alone: its
  /// own kernel; more: a row-blocked kernel), in microseconds.
  double gpuTime(ArrayRef<unsigned> group);
  /// Whether the time for grouping is up (checked between merges).
  bool outOfTime() {
    if (!timedOut && std::chrono::steady_clock::now() >= options.deadline)
      timedOut = true;
    return timedOut;
  }
  SmallVector<unsigned> groupOf(unsigned u);
  void build(ArrayRef<unsigned> group);

  func::FuncOp func;
  RowBlockOptions options;
  bool timedOut = false;
  std::vector<Unit> units;
  llvm::DenseMap<Value, unsigned> producer; // result -> unit
  llvm::DenseMap<Operation *, unsigned> unitOf;
  std::vector<SmallVector<unsigned>> users; // unit -> consumer units
  std::vector<unsigned> parent;             // union-find over units
  std::vector<SmallVector<unsigned>> members; // of each union-find root, in order
};

void RowGrouper::collect() {
  Block &entry = func.getBody().front();
  for (Operation &op : entry.without_terminator()) {
    Unit u;
    u.op = &op;
    if (auto c = dyn_cast<ComputeOp>(op)) {
      u.members.push_back(c);
      for (auto [i, v] : llvm::enumerate(c.getInputs()))
        u.reads.push_back({c, (unsigned)i, (unsigned)i});
      for (unsigned j = 0; j < c.getNumIndexReads(); ++j)
        u.indexReads.push_back({c, j, (unsigned)c.getInputs().size() + j});
    } else if (auto f = dyn_cast<FusedOp>(op); f && !f.getRowBlock()) {
      Block &body = f.getBody().front();
      bool plain = true;
      for (Operation &inner : body.without_terminator()) {
        auto c = dyn_cast<ComputeOp>(inner);
        if (!c) {
          plain = false;
          break;
        }
        u.members.push_back(c);
        // Each read (data, then index values) of one of the body's arguments.
        auto addReads = [&](ValueRange values, SmallVectorImpl<UnitRead> &into) {
          for (auto [i, v] : llvm::enumerate(values)) {
            auto arg = dyn_cast<BlockArgument>(v);
            if (!arg || arg.getOwner() != &body) {
              plain = false;
              return;
            }
            into.push_back({c, (unsigned)i, arg.getArgNumber()});
          }
        };
        addReads(c.getInputs(), u.reads);
        addReads(c.getIndexInputs(), u.indexReads);
      }
      // Only fused ops whose results are their members' results in order.
      auto ret = cast<ReturnOp>(body.getTerminator());
      if (ret.getValues().size() != u.members.size())
        plain = false;
      else
        for (auto [v, m] : llvm::zip(ret.getValues(), u.members))
          plain &= v == m.getResult();
      if (!plain)
        u.members.clear();
    }
    if (u.members.empty())
      continue;
    // Eligibility: one row extent, row-legal reads.
    int64_t extent = u.members.front().getNumParallelDims() ? u.members.front().getBounds()[0] : 0;
    for (ComputeOp m : u.members)
      if (whyNotRowOp(m, extent))
        extent = 0;
    for (const UnitRead &r : u.reads)
      if (extent && whyNotRowRead(r.member, r.read, extent, /*internal=*/false))
        extent = 0;
    // Every block reads the operands that are not indexed by row whole:
    // they must fit in cache (a GEMM's weights re-read per block of rows
    // would cost more than the grouping saves).
    int64_t wholeBytes = 0;
    llvm::DenseSet<Value> whole;
    // (A read through index values, X[col[e], f], touches only the rows it
    // gathers, as it does unblocked: it does not count.)
    for (UnitRead r : u.reads) {
      AffineMap map = r.member.getIndexingMap(r.read);
      Value v = op.getOperand(r.operand);
      if (map.getNumSymbols() && llvm::any_of(map.getResults(), [](AffineExpr e) {
            return e.isSymbolicOrConstant() && !isa<AffineConstantExpr>(e);
          }))
        continue;
      if (llvm::none_of(map.getResults(), [](AffineExpr e) { return e.isFunctionOfDim(0); }) &&
          whole.insert(v).second)
        wholeBytes += tensorBytes(v.getType());
    }
    if (extent < options.minBlocks || wholeBytes > options.blockBytes)
      extent = 0;
    // A GEMM (plain or implicit) packs its whole operands again in every
    // block: unless they are small (L1-resident, 32 KB), its work must
    // dwarf that (32 flops per byte packed, with the worst case of one row
    // per block).
    for (ComputeOp m : u.members)
      if (extent && wholeBytes > 32 * 1024 && (isContractionShaped(m) || isBilinear(m)) &&
          countOpCost(m).flops() < 32.0 * wholeBytes * extent)
        extent = 0;
    u.extent = extent;
    unsigned id = units.size();
    unitOf[&op] = id;
    for (Value v : op.getResults())
      producer[v] = id;
    units.push_back(std::move(u));
  }
  users.resize(units.size());
  for (auto [id, u] : llvm::enumerate(units)) {
    llvm::DenseSet<unsigned> seen;
    for (const UnitRead &r : u.reads)
      if (auto it = producer.find(u.op->getOperand(r.operand));
          it != producer.end() && seen.insert(it->second).second)
        users[it->second].push_back(id);
  }
}

SmallVector<unsigned> RowGrouper::groupOf(unsigned u) { return members[find(u)]; }

bool RowGrouper::internalReadsOk(ArrayRef<unsigned> group) {
  llvm::DenseSet<unsigned> in(group.begin(), group.end());
  for (unsigned u : group)
    for (const UnitRead &r : units[u].reads)
      if (auto it = producer.find(valueOf(u, r)); it != producer.end() && in.contains(it->second))
        if (whyNotRowRead(r.member, r.read, units[u].extent, /*internal=*/true))
          return false;
  return true;
}

/// Whether some path of uses leads from an op of `from` to an op of `to`
/// through an op outside both (merging them would then need a value that is
/// computed after the merged kernel and read by it). Groups formed so far
/// count as the one kernel they will be: reaching one of their ops reaches
/// all of them (two groups must not feed each other both ways).
bool RowGrouper::reaches(ArrayRef<unsigned> from, ArrayRef<unsigned> to) {
  Block &entry = func.getBody().front();
  llvm::DenseSet<Operation *> fromOps, toOps, seen;
  for (unsigned u : from)
    fromOps.insert(units[u].op);
  for (unsigned u : to)
    toOps.insert(units[u].op);
  SmallVector<Operation *> stack;
  auto push = [&](Operation *op) {
    if (!seen.insert(op).second)
      return;
    stack.push_back(op);
    if (auto it = unitOf.find(op); it != unitOf.end())
      for (unsigned other : groupOf(it->second))
        if (!fromOps.contains(units[other].op) && seen.insert(units[other].op).second)
          stack.push_back(units[other].op);
  };
  auto forUsers = [&](Operation *op, auto &&visit) {
    for (Value v : op->getResults())
      for (Operation *user : v.getUsers())
        if (Operation *top = entry.findAncestorOpInBlock(*user); top && !fromOps.contains(top))
          visit(top);
  };
  for (Operation *op : fromOps)
    forUsers(op, [&](Operation *top) {
      if (!toOps.contains(top))
        push(top);
    });
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    if (toOps.contains(op))
      return true;
    forUsers(op, push);
  }
  return false;
}

bool RowGrouper::tryMerge(unsigned a, unsigned b) {
  if (!units[a].extent || units[a].extent != units[b].extent || find(a) == find(b))
    return false;
  SmallVector<unsigned> ga = groupOf(a), gb = groupOf(b);
  SmallVector<unsigned> both(ga);
  both.append(gb.begin(), gb.end());
  if (!internalReadsOk(both) || reaches(ga, gb) || reaches(gb, ga))
    return false;
  if (options.gpu && gpuTime(both) >= gpuTime(ga) + gpuTime(gb))
    return false;
  unsigned from = find(a), to = find(b);
  parent[from] = to;
  // The members of a group, in unit (program) order.
  SmallVector<unsigned> merged;
  std::merge(members[from].begin(), members[from].end(), members[to].begin(), members[to].end(),
             std::back_inserter(merged));
  members[to] = std::move(merged);
  members[from].clear();
  return true;
}

double RowGrouper::gpuTime(ArrayRef<unsigned> group) {
  const GpuRowCosts &c = *options.gpu;
  llvm::DenseSet<unsigned> in(group.begin(), group.end());
  llvm::DenseSet<Operation *> ops;
  for (unsigned u : group)
    ops.insert(units[u].op);
  Block &entry = func.getBody().front();
  // Traffic: what the group reads from outside (once; those not indexed by
  // row again per row, from L2) and the results used outside it.
  int64_t extent = units[group.front()].extent;
  double bytes = 0, perRowBytes = 0, gemmFlops = 0, otherFlops = 0;
  int64_t rowWork = 1;
  double threads = 1; // of the unit's own kernel (the GPU kernels' choices)
  // Each value read from outside: whether some read takes it whole (not by
  // row; a gather through index values touches only the rows it reads, as
  // in collect()).
  llvm::MapVector<Value, bool> outside;
  for (unsigned u : group) {
    for (UnitRead r : units[u].reads) {
      Value v = valueOf(u, r);
      if (auto it = producer.find(v); it != producer.end() && in.contains(it->second))
        continue;
      AffineMap map = r.member.getIndexingMap(r.read);
      bool gather = map.getNumSymbols() && llvm::any_of(map.getResults(), [](AffineExpr e) {
                      return e.isSymbolicOrConstant() && !isa<AffineConstantExpr>(e);
                    });
      bool whole = !gather && llvm::none_of(map.getResults(),
                                            [](AffineExpr e) { return e.isFunctionOfDim(0); });
      outside[v] |= whole;
    }
    for (Value v : units[u].op->getResults())
      if (group.size() == 1 || llvm::any_of(v.getUsers(), [&](Operation *user) {
            return !ops.contains(entry.findAncestorOpInBlock(*user));
          }))
        bytes += tensorBytes(v.getType());
    for (ComputeOp m : units[u].members) {
      double flops = kernelFlops(m);
      bool gemm = isContractionShaped(m) || isBilinear(m);
      (gemm ? gemmFlops : otherFlops) += flops;
      // A row's work: its points past the row dim, or its terms.
      int64_t rowPoints = 1, points = 1, terms = 1;
      for (auto [i, b] : llvm::enumerate(m.getBounds()))
        if (i >= m.getNumParallelDims())
          terms *= b;
        else
          points *= b, rowPoints *= i > 0 ? b : 1;
      rowWork = std::max({rowWork, rowPoints, terms});
      // Its own kernel: a GEMM's thread computes an 8x8 tile; a reduction
      // with few points and many terms has a block per point; else a
      // thread per point.
      double own = gemm ? double(points) / 64
                   : points < (int64_t(1) << 18) && terms >= 128
                       ? double(points) * double(std::min<int64_t>(256, terms))
                       : double(points);
      threads = std::max(threads, own);
    }
  }
  for (auto [v, whole] : outside) {
    bytes += tensorBytes(v.getType());
    if (whole)
      perRowBytes += tensorBytes(v.getType());
  }
  if (group.size() == 1) {
    double busy = std::min(1.0, threads / double(c.threads));
    return c.launch +
           std::max(bytes / c.bandwidth, gemmFlops / c.gemmPeak + otherFlops / c.otherPeak) / busy;
  }
  // A thread block per row (up to 256 threads, as GpuRowBlock): with few
  // rows, most of the GPU idles.
  int64_t rowThreads = std::min<int64_t>(256, (rowWork + 31) / 32 * 32);
  double busy = std::min(1.0, double(extent) * double(rowThreads) / double(c.threads));
  double time = std::max(bytes / c.bandwidth + perRowBytes * double(extent) / c.l2Bandwidth,
                         gemmFlops / c.rowGemmPeak + otherFlops / c.otherPeak);
  return c.launch + time / busy;
}

void RowGrouper::build(ArrayRef<unsigned> group) {
  int64_t extent = units[group.front()].extent;
  llvm::DenseSet<Operation *> inGroup;
  for (unsigned u : group)
    inGroup.insert(units[u].op);
  // Operands: the values read from outside, in first-read order.
  SmallVector<Value> inputs;
  llvm::DenseMap<Value, unsigned> inputIndex;
  int64_t rowBytes = 0;
  for (unsigned u : group)
    for (UnitRead r : units[u].reads) {
      Value value = valueOf(u, r);
      Operation *def = value.getDefiningOp();
      if (def && inGroup.contains(def))
        continue;
      if (inputIndex.try_emplace(value, inputs.size()).second) {
        inputs.push_back(value);
        AffineMap map = r.member.getIndexingMap(r.read);
        if (llvm::any_of(map.getResults(), [](AffineExpr e) { return e.isFunctionOfDim(0); }))
          rowBytes += tensorBytes(value.getType()) / extent;
      }
    }
  // Index tensors (never computed by a neo.compute): read from outside.
  for (unsigned u : group)
    for (UnitRead r : units[u].indexReads) {
      Value value = valueOf(u, r);
      if (inputIndex.try_emplace(value, inputs.size()).second)
        inputs.push_back(value);
    }
  // Results: the values used outside the group.
  SmallVector<Value> results;
  size_t numValues = 0;
  for (unsigned u : group)
    for (Value v : units[u].op->getResults()) {
      ++numValues;
      rowBytes += tensorBytes(v.getType()) / extent;
      if (llvm::any_of(v.getUsers(), [&](Operation *user) {
            return !inGroup.contains(func.getBody().front().findAncestorOpInBlock(*user));
          }))
        results.push_back(v);
    }
  // The largest block with at least minBlocks blocks within the byte budget.
  // The budget keeps the values passed between the ops in cache; a group
  // that passes none (kernels sharing an operand) takes the largest block.
  bool passesValues = results.size() < numValues;
  int64_t rows = 1;
  for (int64_t b = extent / options.minBlocks; b > 1; --b)
    if (extent % b == 0 && (!passesValues || b * rowBytes <= options.blockBytes)) {
      rows = b;
      break;
    }

  Operation *last = units[group.back()].op;
  OpBuilder builder(last);
  Location loc = last->getLoc();
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  auto fused = FusedOp::create(builder, loc, resultTypes, inputs, builder.getI64IntegerAttr(rows));
  Block *body = new Block();
  fused.getBody().push_back(body);
  IRMapping outer; // function values -> values in the body
  for (Value v : inputs)
    outer.map(v, body->addArgument(v.getType(), loc));
  OpBuilder in = OpBuilder::atBlockEnd(body);
  for (unsigned u : group) {
    // Members of a horizontal kernel read its block arguments: map them to
    // the values they stand for.
    for (UnitRead r : units[u].reads)
      if (Value inner = r.member.getInputs()[r.read]; inner != valueOf(u, r))
        outer.map(inner, outer.lookup(valueOf(u, r)));
    for (UnitRead r : units[u].indexReads)
      if (Value inner = r.member.getIndexInputs()[r.read]; inner != valueOf(u, r))
        outer.map(inner, outer.lookup(valueOf(u, r)));
    for (ComputeOp m : units[u].members)
      outer.map(m.getResult(), in.clone(*m, outer)->getResult(0));
    // A horizontal kernel's results are its members' results.
    if (auto f = dyn_cast<FusedOp>(units[u].op))
      for (auto [r, m] : llvm::zip(f.getResults(), units[u].members))
        outer.map(r, outer.lookup(m.getResult()));
  }
  SmallVector<Value> returned;
  for (Value v : results)
    returned.push_back(outer.lookup(v));
  ReturnOp::create(in, loc, returned);
  for (auto [v, r] : llvm::zip(results, fused.getResults()))
    v.replaceAllUsesWith(r);
  for (unsigned u : llvm::reverse(group))
    units[u].op->erase();
}

unsigned RowGrouper::run() {
  collect();
  parent.resize(units.size());
  members.resize(units.size());
  for (unsigned u = 0; u < units.size(); ++u) {
    parent[u] = u;
    members[u] = {u};
  }
  // Producer-consumer pairs first, then kernels that read a common value.
  // Each merge is checked on its own, so stopping at the deadline keeps a
  // valid grouping: the merges made so far.
  for (unsigned p = 0; p < units.size() && !outOfTime(); ++p)
    for (unsigned c : users[p]) {
      if (outOfTime())
        break;
      tryMerge(p, c);
    }
  // Kernels that read a common value: by row, one block of it in cache
  // serves both; read whole (the weights that a convolution's forward and
  // data-gradient share), it is read once per block for both, and one
  // kernel is launched instead of two.
  llvm::MapVector<Value, SmallVector<unsigned>> readers;
  for (auto [id, u] : llvm::enumerate(units))
    for (const UnitRead &r : u.reads)
      if (Value v = valueOf(id, r); readers[v].empty() || readers[v].back() != id)
        readers[v].push_back(id);
  for (auto &[v, rs] : readers)
    for (size_t i = 0; i + 1 < rs.size() && !outOfTime(); ++i)
      tryMerge(rs[i], rs[i + 1]);

  SmallVector<SmallVector<unsigned>> toBuild;
  for (unsigned u = 0; u < units.size(); ++u)
    if (find(u) == u)
      if (SmallVector<unsigned> g = groupOf(u); g.size() > 1)
        toBuild.push_back(std::move(g));
  for (ArrayRef<unsigned> g : toBuild)
    build(g);
  sortTopologically(&func.getBody().front());
  return toBuild.size();
}

} // namespace

unsigned fusion::formRowBlocks(func::FuncOp func, const RowBlockOptions &options) {
  return RowGrouper(func, options).run();
}
