//===- GpuScoreTilesMatch.cpp - Finding score-tile programs ---------------===//
//
// A program starts at an anchor: a contraction s[b, i, j] = sum_x
// G(q[b, i, x], k[b, j, x]) into an L x L temporary (any body whose product
// splits into factors of q and k and constant factors; the loop of q's
// side is the rows, of k's the keys). The top-level ops after it join in
// order while they read or write the L x L buffers the program has:
//
//  - tile ops write an L x L temporary (axes as s's): elementwise, their
//    body read at each score (other tiles, vectors read from global memory
//    by batch dims and rows or keys, linalg.index of those loops), or a
//    contraction over a short dim x whose product splits into factors G of
//    two staged operands [b, i, x] and [b, j, x] and factors F of the rest;
//  - consumers write an output [b, i, x] (or [b, j, x]) reducing over the
//    keys (the rows): a product of factors F of the tiles and vectors and
//    factors G of one staged operand [b, j, x] ([b, i, x]).
//
// Any other op reading a program buffer keeps it (and the tile ops that
// write it and what they read): kept tile ops stay and are also recomputed
// in the kernels. Tile ops none of whose values anything else reads go
// with their temporaries, consumers with their fills. The kernels run
// after the program's last op; nothing between a program op and that
// point writes what the op reads or touches what it writes. A program
// needs a consumer and a temporary it removes.
//
//===----------------------------------------------------------------------===//
#include "GpuBodyMatch.h"
#include "GpuKernelBuilder.h"
#include "GpuScoreTiles.h"
#include "neo/Codegen/Utils/BufferEffects.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include <climits>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::scoretiles;
using namespace mlir::neo::bodymatch;

namespace {

/// The f32 constant that `buffer` holds before `user` (initOf: the op that
/// last wrote it is a constant fill, or a copy of a buffer so filled).
Attribute constantInit(Value buffer, Operation *user) {
  Attribute value = initOf(buffer, user, {}, 0, /*readsOk=*/true).second;
  auto f = dyn_cast_or_null<FloatAttr>(value);
  return f && f.getType().isF32() ? value : Attribute();
}

/// The block arguments `v` reads and the loops its linalg.index ops read,
/// when it is made of pure ops of `body` and constants.
bool readsOf(Value v, Block *body, llvm::SmallSetVector<Value, 4> &args,
             llvm::SmallSetVector<unsigned, 4> &dims, unsigned depth = 0) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != body)
      return false;
    args.insert(v);
    return true;
  }
  if (matchPattern(v, m_Constant()))
    return true;
  Operation *def = v.getDefiningOp();
  if (depth > 32 || def->getBlock() != body || def->getNumRegions() || !isPure(def))
    return false;
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    dims.insert(index.getDim());
    return true;
  }
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return readsOf(o, body, args, dims, depth + 1); });
}

bool isStaticF32(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32() && t.getLayout().isIdentity();
}

/// A staged operand may also hold 16-bit floats (a bf16 or f16 training
/// graph's q, k and v; the bodies widen what they read).
bool isStageable(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getLayout().isIdentity() &&
         isa<Float32Type, BFloat16Type, Float16Type>(t.getElementType());
}

struct Matcher {
  explicit Matcher(func::FuncOp func) : func(func) {}
  func::FuncOp func;
  Program p;
  SmallVector<int> scoreAxes;
  llvm::DenseMap<Value, int> current; // an L x L buffer: its tile value now
  SmallVector<Value> tileBuffers;     // the buffer of each tile value
  SmallVector<Operation *> ops;       // the program's ops, in order
  Operation *blame = nullptr;         // a consumer that finish could not keep

  bool isScoreBuffer(Value v) { return current.count(baseBuffer(v)); }

  /// Roles of `op`'s loops from its reads and writes of program buffers
  /// (the L x L axes), INT_MIN where unknown; false on a conflict.
  bool rolesFromScores(linalg::GenericOp op, SmallVectorImpl<int> &roles) {
    roles.assign(op.getNumLoops(), INT_MIN);
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isScoreBuffer(operand.get()))
        continue;
      if (operand.get() != baseBuffer(operand.get()))
        return false;
      auto dims = dimsOf(op.getMatchingIndexingMap(&operand));
      if (!dims || dims->size() != scoreAxes.size())
        return false;
      for (auto [dim, role] : llvm::zip(*dims, scoreAxes)) {
        if (roles[dim] != INT_MIN && roles[dim] != role)
          return false;
        roles[dim] = role;
      }
    }
    return true;
  }

  SmallVector<int> axesOf(linalg::GenericOp op, OpOperand *operand, ArrayRef<int> roles) {
    SmallVector<int> axes;
    if (auto dims = dimsOf(op.getMatchingIndexingMap(operand)))
      for (unsigned d : *dims)
        axes.push_back(roles[d]);
    return axes;
  }

  /// The staged operand of `buffer` with axes `axes` (all batch dims, one
  /// side, kShort, each once), added if new; -1 if it is not one.
  int stageOf(Value buffer, ArrayRef<int> axes) {
    if (!isStageable(buffer) || isScoreBuffer(buffer) || axes.size() != p.batch.size() + 2 ||
        !llvm::is_contained(axes, kShort))
      return -1;
    int side = llvm::is_contained(axes, kRow) ? kRow : kKey;
    llvm::SmallDenseSet<int, 4> seen(axes.begin(), axes.end());
    if (seen.size() != axes.size() || !seen.contains(side))
      return -1;
    for (int b = 0, e = p.batch.size(); b < e; ++b)
      if (!seen.contains(b))
        return -1;
    auto type = cast<MemRefType>(buffer.getType());
    int64_t extent = type.getDimSize(llvm::find(axes, kShort) - axes.begin());
    if (extent > kMaxShort)
      return -1;
    for (auto [i, s] : llvm::enumerate(p.stages))
      if (s.buffer == buffer && ArrayRef<int>(s.axes) == axes)
        return i;
    p.stages.push_back({buffer, SmallVector<int>(axes), side, extent});
    return p.stages.size() - 1;
  }

  /// A vector read per score: distinct batch, row or key axes.
  bool isVector(Value buffer, ArrayRef<int> axes) {
    llvm::SmallDenseSet<int, 4> seen;
    return isStaticF32(buffer) && !isScoreBuffer(buffer) &&
           cast<MemRefType>(buffer.getType()).getRank() == (int64_t)axes.size() &&
           llvm::all_of(axes,
                        [&](int r) {
                          return seen.insert(r).second && (r >= 0 || r == kRow || r == kKey);
                        }) &&
           !(seen.contains(kRow) && seen.contains(kKey));
  }

  /// The reads of `op`'s inputs; staged operands allowed with `staged`.
  bool readInputs(linalg::GenericOp op, ArrayRef<int> roles, bool staged,
                  SmallVectorImpl<Read> &reads) {
    reads.assign(op->getNumOperands(), Read());
    for (OpOperand *in : op.getDpsInputOperands()) {
      Read &r = reads[in->getOperandNumber()];
      SmallVector<int> axes = axesOf(op, in, roles);
      if (axes.size() != (size_t)op.getMatchingIndexingMap(in).getNumResults() ||
          llvm::is_contained(axes, INT_MIN))
        return false;
      if (isScoreBuffer(in->get())) {
        if (ArrayRef<int>(axes) != ArrayRef<int>(scoreAxes))
          return false;
        r.kind = Read::Tile, r.tile = current.lookup(in->get());
      } else if (isVector(in->get(), axes)) {
        r.kind = Read::Vector, r.buffer = in->get(), r.axes = axes;
      } else if (staged && (r.stage = stageOf(in->get(), axes)) >= 0) {
        r.kind = Read::Staged;
      } else {
        return false;
      }
    }
    return true;
  }

  /// Splits a reduction body's product into F (reads no staged operand,
  /// no x) and G (reads staged operands only, no index).
  bool split(linalg::GenericOp op, ArrayRef<int> roles, ArrayRef<Read> reads, Value term,
             SmallVectorImpl<Value> &f, SmallVectorImpl<Value> &fDivisors,
             SmallVectorImpl<Value> &g) {
    Block *body = op.getBody();
    SmallVector<Value> factors, divisors;
    flatten(term, body, factors, divisors);
    auto kindOf = [&](Value v, bool &isG) {
      llvm::SmallSetVector<Value, 4> args;
      llvm::SmallSetVector<unsigned, 4> dims;
      if (!readsOf(v, body, args, dims))
        return false;
      bool anyStaged = false, allStaged = true;
      for (Value a : args) {
        unsigned n = cast<BlockArgument>(a).getArgNumber();
        if (n >= op.getNumDpsInputs())
          return false; // the init is the combiner's
        bool s = reads[n].kind == Read::Staged;
        anyStaged |= s, allStaged &= s;
      }
      isG = anyStaged;
      if (isG)
        return allStaged && dims.empty();
      return llvm::all_of(dims, [&](unsigned d) { return roles[d] != kShort; });
    };
    for (Value v : factors) {
      bool isG;
      if (!kindOf(v, isG))
        return false;
      (isG ? g : f).push_back(v);
    }
    for (Value v : divisors) {
      bool isG;
      if (!kindOf(v, isG) || isG)
        return false;
      fDivisors.push_back(v);
    }
    return !g.empty();
  }

  /// The anchor: a contraction into a fresh L x L temporary of q's and k's
  /// factors (and constants).
  bool matchAnchor(linalg::GenericOp op) {
    Value out = op.getNumDpsInits() == 1 ? op.getDpsInits()[0] : Value();
    if (!out || !out.getDefiningOp<memref::AllocOp>() || !isStaticF32(out) ||
        op.getNumDpsInputs() != 2 || op.getNumReductionLoops() != 1 || !pureBody(op) ||
        op->getParentOp() != func)
      return false;
    auto outDims = dimsOf(op.getIndexingMapsArray().back());
    auto aDims = dimsOf(op.getIndexingMapsArray()[0]);
    auto bDims = dimsOf(op.getIndexingMapsArray()[1]);
    if (!outDims || !aDims || !bDims || outDims->size() < 2)
      return false;
    SmallVector<int> roles(op.getNumLoops(), INT_MIN);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    for (auto [dim, it] : llvm::enumerate(op.getIteratorTypesArray()))
      if (it == utils::IteratorType::reduction)
        roles[dim] = kShort;
    for (unsigned d : *outDims) {
      bool inA = llvm::is_contained(*aDims, d), inB = llvm::is_contained(*bDims, d);
      if (roles[d] != INT_MIN || (!inA && !inB))
        return false;
      if (inA && inB) {
        roles[d] = p.batch.size();
        p.batch.push_back(ranges[d]);
      } else if (inA && !llvm::is_contained(roles, kRow)) {
        roles[d] = kRow, p.rows = ranges[d];
      } else if (inB && !llvm::is_contained(roles, kKey)) {
        roles[d] = kKey, p.keys = ranges[d];
      } else {
        return false;
      }
    }
    if (llvm::is_contained(roles, INT_MIN) || !p.rows || !p.keys)
      return false;
    for (unsigned d : *outDims)
      scoreAxes.push_back(roles[d]);
    TileOp t;
    t.op = op, t.roles = roles, t.contraction = true;
    t.extent = ranges[llvm::find(roles, kShort) - roles.begin()];
    if (!readInputs(op, roles, /*staged=*/true, t.reads) || t.reads[0].kind != Read::Staged ||
        t.reads[1].kind != Read::Staged ||
        p.stages[t.reads[0].stage].side == p.stages[t.reads[1].stage].side)
      return false;
    return finishContraction(t, out);
  }

  /// The init and factors of a contraction tile op writing `out`.
  bool finishContraction(TileOp &t, Value out) {
    Operation *combiner;
    Value term = reduced(t.op, combiner);
    if (!term || !isa<arith::AddFOp>(combiner) ||
        !split(t.op, t.roles, t.reads, term, t.f, t.fDivisors, t.g))
      return false;
    if (isScoreBuffer(out)) {
      t.init = current.lookup(out);
    } else {
      // A fresh temporary that a constant fill (or a copy of a buffer so
      // filled) last wrote. (That op stays: GpuScoreTiles.cpp drops the
      // writes to temporaries nothing reads any more.)
      t.initValue = constantInit(out, t.op);
      if (!t.initValue)
        return false;
    }
    return addTile(std::move(t), out);
  }

  bool addTile(TileOp t, Value out) {
    // A fresh temporary must not be a buffer the program reads otherwise
    // or writes as an output (bufferization may reuse one).
    if (!isScoreBuffer(out)) {
      for (const Stage &s : p.stages)
        if (s.buffer == out)
          return false;
      auto readsAsVector = [&](ArrayRef<Read> reads) {
        return llvm::any_of(
            reads, [&](const Read &r) { return r.kind == Read::Vector && r.buffer == out; });
      };
      for (const TileOp &other : p.tiles)
        if (readsAsVector(other.reads))
          return false;
      for (const Consumer &c : p.consumers)
        if (readsAsVector(c.reads) || c.op.getDpsInits()[0] == out)
          return false;
    }
    p.tiles.push_back(std::move(t));
    tileBuffers.push_back(out);
    current[out] = p.tiles.size() - 1;
    ops.push_back(p.tiles.back().op);
    return true;
  }

  /// A tile op after the anchor, or a consumer.
  enum class Kind { None, Tile, Consumer, Fail };
  Kind matchNext(linalg::GenericOp op) {
    size_t stages = p.stages.size();
    Kind kind = matchNextOp(op);
    if (kind == Kind::Fail)
      p.stages.truncate(stages); // (the stages it added)
    return kind;
  }
  Kind matchNextOp(linalg::GenericOp op) {
    SmallVector<int> roles;
    if (op.getNumDpsInits() != 1 || !pureBody(op) || !rolesFromScores(op, roles))
      return Kind::Fail;
    Value out = op.getDpsInits()[0];
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto outDims = dimsOf(op.getIndexingMapsArray().back());
    if (!outDims || out != baseBuffer(out) || !isStaticF32(out))
      return Kind::Fail;
    // A fresh temporary of the scores' axes: each loop of its map has that
    // role already, or is a parallel loop that no other loop's role is
    // (else it is a consumer's output, such as an intermediate dq).
    auto iterators = op.getIteratorTypesArray();
    bool scoresOut = isScoreBuffer(out) ||
                     (out.getDefiningOp<memref::AllocOp>() &&
                      cast<MemRefType>(out.getType()).getRank() == (int64_t)scoreAxes.size() &&
                      llvm::all_of(llvm::zip(*outDims, scoreAxes), [&](auto pair) {
                        auto [d, role] = pair;
                        return roles[d] == role ||
                               (roles[d] == INT_MIN && !llvm::is_contained(roles, role) &&
                                iterators[d] == utils::IteratorType::parallel);
                      }));
    // Loops of known roles span the program's extents.
    auto spans = [&](ArrayRef<int> roles) {
      for (auto [d, role] : llvm::enumerate(roles))
        if ((role >= 0 && ranges[d] != p.batch[role]) || (role == kRow && ranges[d] != p.rows) ||
            (role == kKey && ranges[d] != p.keys))
          return false;
      return true;
    };
    if (scoresOut) {
      for (auto [d, role] : llvm::zip(*outDims, scoreAxes))
        roles[d] = role;
      if (!spans(roles))
        return Kind::Fail;
      TileOp t;
      t.op = op;
      unsigned reductions = op.getNumReductionLoops();
      for (auto [dim, it] : llvm::enumerate(op.getIteratorTypesArray()))
        if (it == utils::IteratorType::reduction && roles[dim] == INT_MIN)
          roles[dim] = kShort, t.extent = ranges[dim];
      if (llvm::is_contained(roles, INT_MIN) || reductions > 1 || (reductions == 1 && !t.extent))
        return Kind::Fail;
      t.roles = roles;
      if (!readInputs(op, roles, /*staged=*/reductions == 1, t.reads))
        return Kind::Fail;
      if (reductions == 1) {
        t.contraction = true;
        return finishContraction(t, out) ? Kind::Tile : Kind::Fail;
      }
      // Elementwise: its init argument is the buffer's tile value, when used;
      // its body reads its arguments, constants and indices only (the
      // kernel clones it).
      Read &init = t.reads.back();
      Value initArg = op.getBody()->getArguments().back();
      if (isScoreBuffer(out))
        init.kind = Read::Tile, init.tile = current.lookup(out);
      else if (!initArg.use_empty())
        return Kind::Fail;
      llvm::SmallSetVector<Value, 4> args;
      llvm::SmallSetVector<unsigned, 4> dims;
      if (!readsOf(op.getBody()->getTerminator()->getOperand(0), op.getBody(), args, dims))
        return Kind::Fail;
      return addTile(std::move(t), out) ? Kind::Tile : Kind::Fail;
    }
    // A consumer: one reduction over the rows or keys, the output's loops
    // batch dims, the other side and one short dim.
    if (op.getNumReductionLoops() != 1)
      return Kind::Fail;
    Consumer c;
    c.op = op;
    int other = INT_MIN;
    for (auto [dim, it] : llvm::enumerate(op.getIteratorTypesArray()))
      if (it == utils::IteratorType::reduction)
        other = roles[dim];
    if (other != kRow && other != kKey)
      return Kind::Fail;
    c.side = other == kRow ? kKey : kRow;
    llvm::SmallDenseSet<int, 4> outRoles;
    for (unsigned d : *outDims) {
      if (roles[d] == INT_MIN && !llvm::is_contained(roles, kShort))
        roles[d] = kShort, c.extent = ranges[d];
      if (!outRoles.insert(roles[d]).second)
        return Kind::Fail;
    }
    if (outRoles.size() != p.batch.size() + 2 || !outRoles.contains(c.side) ||
        !outRoles.contains(kShort) || c.extent > kMaxShort || llvm::is_contained(roles, INT_MIN))
      return Kind::Fail;
    for (int b = 0, e = p.batch.size(); b < e; ++b)
      if (!outRoles.contains(b))
        return Kind::Fail;
    c.roles = roles;
    if (!spans(roles) || !readInputs(op, roles, /*staged=*/true, c.reads))
      return Kind::Fail;
    Operation *combiner;
    Value term = reduced(op, combiner);
    if (!term || !isa<arith::AddFOp>(combiner) ||
        !split(op, roles, c.reads, term, c.f, c.fDivisors, c.g))
      return Kind::Fail;
    // G reads one staged operand, of the other side.
    for (auto [n, r] : llvm::enumerate(c.reads)) {
      if (r.kind != Read::Staged)
        continue;
      if (c.stage >= 0 || p.stages[r.stage].side != other)
        return Kind::Fail;
      c.stage = r.stage, c.gArg = op.getBody()->getArgument(n);
    }
    if (c.stage < 0)
      return Kind::Fail;
    // Its init: the constant that a fill (or a copy of a buffer so filled)
    // wrote last. That op goes when nothing reads the output in between
    // (bufferization may copy a zero-filled output to another).
    c.initValue = constantInit(out, op);
    if (!c.initValue)
      return Kind::Fail;
    bool read = false;
    for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
      if (mayWrite(prev, out)) {
        c.fill = read ? nullptr : prev;
        break;
      }
      read |= mayTouch(prev, out);
    }
    p.consumers.push_back(std::move(c));
    ops.push_back(op);
    return Kind::Consumer;
  }

  /// Whether `op` reads or writes a program buffer.
  bool touchesScores(Operation *op) {
    return llvm::any_of(current, [&](auto &entry) { return mayTouch(op, entry.first); });
  }

  /// The tile values that ops outside the program read (each the value of
  /// a buffer at the op), with what they are made of: those tile ops are
  /// kept. Returns the buffers with a kept value.
  llvm::DenseSet<Value> markKept(ArrayRef<int> outsideReads) {
    for (TileOp &t : p.tiles)
      t.kept = false;
    SmallVector<int> work(outsideReads.begin(), outsideReads.end());
    while (!work.empty()) {
      TileOp &t = p.tiles[work.pop_back_val()];
      if (t.kept)
        continue;
      t.kept = true;
      for (const Read &r : t.reads)
        if (r.kind == Read::Tile)
          work.push_back(r.tile);
      if (t.init >= 0)
        work.push_back(t.init);
    }
    llvm::DenseSet<Value> keptBuffers;
    for (auto [i, t] : llvm::enumerate(p.tiles))
      if (t.kept)
        keptBuffers.insert(tileBuffers[i]);
    return keptBuffers;
  }

  /// The program's ops that go if `consumer` leaves it (to another kernel,
  /// which reads what it reads).
  llvm::DenseSet<Operation *> goneWithout(ArrayRef<int> outsideReads, const Consumer &consumer) {
    SmallVector<int> more(outsideReads.begin(), outsideReads.end());
    for (const Read &r : consumer.reads)
      if (r.kind == Read::Tile)
        more.push_back(r.tile);
    markKept(more);
    llvm::DenseSet<Operation *> gone;
    for (TileOp &t : p.tiles)
      if (!t.kept)
        gone.insert(t.op);
    for (Consumer &c : p.consumers)
      if (c.op != consumer.op)
        gone.insert(c.op);
    return gone;
  }

  /// Marks what outside ops read as kept, decides what goes, and checks
  /// the ops between the program's ops and its end.
  bool finish(ArrayRef<int> outsideReads) {
    if (p.consumers.empty())
      return false;
    llvm::DenseSet<Value> keptBuffers = markKept(outsideReads);
    SmallVector<Operation *> erase;
    bool removesOne = false;
    for (auto [i, t] : llvm::enumerate(p.tiles))
      if (!t.kept) {
        erase.push_back(t.op);
        removesOne = true;
      }
    for (Consumer &c : p.consumers) {
      erase.push_back(c.op);
      if (c.fill)
        erase.push_back(c.fill);
    }
    if (!removesOne)
      return false;
    p.erase = erase;
    p.last = ops.back();
    // No program op reads what a consumer writes (the kernels write it last).
    llvm::DenseSet<Value> outputs;
    for (Consumer &c : p.consumers)
      outputs.insert(c.op.getDpsInits()[0]);
    for (Operation *op : ops)
      for (Value in : linalg::GenericOp(op).getDpsInputs())
        if (outputs.contains(baseBuffer(in)))
          return false;
    // Between each program op and the end: nothing outside writes what it
    // reads or touches what it writes (unless kept).
    llvm::DenseSet<Operation *> inProgram(ops.begin(), ops.end());
    for (Operation *op : ops) {
      SmallVector<Value> reads, writes;
      for (OpOperand &operand : op->getOpOperands()) {
        if (!isa<MemRefType>(operand.get().getType()))
          continue;
        Value buffer = baseBuffer(operand.get());
        bool isInit = linalg::GenericOp(op).isDpsInit(&operand);
        if (isInit && !keptBuffers.contains(buffer))
          writes.push_back(buffer);
        else if (!keptBuffers.contains(buffer))
          reads.push_back(buffer);
      }
      for (Operation *x = op->getNextNode(); x && x != p.last->getNextNode();
           x = x->getNextNode()) {
        if (inProgram.contains(x))
          continue;
        bool clash = llvm::any_of(reads, [&](Value r) { return mayWrite(x, r); }) ||
                     llvm::any_of(writes, [&](Value w) { return mayTouch(x, w); });
        if (clash) {
          // A consumer may leave the program (then runs as it did).
          if (llvm::any_of(p.consumers, [&](Consumer &c) { return c.op == op; }))
            blame = op;
          return false;
        }
      }
    }
    return true;
  }
};

} // namespace

std::vector<Program>
mlir::neo::scoretiles::matchPrograms(func::FuncOp func, LeaveFn leave,
                                     const llvm::DenseSet<Operation *> &refused) {
  std::vector<Program> programs;
  Block &entry = func.getBody().front();
  llvm::DenseSet<Operation *> taken;
  for (Operation &anchorOp : entry) {
    auto anchor = dyn_cast<linalg::GenericOp>(anchorOp);
    if (!anchor || taken.contains(anchor) || refused.contains(anchor))
      continue;
    // Consumers that `leave` gives to another kernel are outside; each one
    // left starts the scan over.
    llvm::DenseSet<Operation *> left;
    for (bool again = true; again;) {
      again = false;
      Matcher m(func);
      if (!m.matchAnchor(anchor))
        break;
      SmallVector<int> outsideReads; // tile values read outside
      bool failed = false;
      for (Operation *op = anchor->getNextNode(); op && !failed; op = op->getNextNode()) {
        if (isa<memref::DeallocOp>(op) || !m.touchesScores(op))
          continue;
        auto generic = dyn_cast<linalg::GenericOp>(op);
        bool candidate = generic && !taken.contains(op) && !left.contains(op);
        if (candidate && m.matchNext(generic) != Matcher::Kind::Fail)
          continue;
        // Anything else may read a program buffer (its value then is
        // kept), never write one.
        for (auto &[buffer, tile] : m.current) {
          if (mayWrite(op, buffer))
            failed = true;
          if (mayTouch(op, buffer))
            outsideReads.push_back(tile);
        }
      }
      if (failed)
        break;
      for (Consumer &c : m.p.consumers)
        if (leave && leave(c.op, m.goneWithout(outsideReads, c))) {
          left.insert(c.op);
          again = true;
        }
      if (again)
        continue;
      if (!m.finish(outsideReads)) {
        if (m.blame) {
          left.insert(m.blame);
          again = true;
          continue;
        }
        break;
      }
      for (Operation *op : m.ops)
        taken.insert(op);
      programs.push_back(std::move(m.p));
    }
  }
  return programs;
}
