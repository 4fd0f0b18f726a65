//===- GpuBatchLaunches.cpp - neo-gpu-batch-launches ----------------------===//
//
// Runs consecutive independent launches of one block shape as one launch:
// a 1-D grid of as many blocks as theirs together, where each block runs
// the body of the launch whose range of block indices it falls in, with
// the block index (x, y, z) that its place in that range stands for. A training step's small
// kernels (the fills before split-K GEMMs, bias gradients, parameter updates) each cost a launch of
// a few microseconds, often more than their work; batched, they cost one.
//
// A launch joins a batch when
//  - its grid and block are constants, its block shape and its shared
//    memory (workgroup attributions and dynamic bytes) are the batch's
//    (each block runs one body, so the bodies share the buffers),
//    it has no async tokens and a single-block body;
//  - every memory access in its body is to a buffer known by its root (a
//    function argument or an allocation, through views), or to memory of
//    its own (shared or private);
//  - it neither writes a buffer that a launch of the batch reads or writes,
//    nor reads one that a launch of the batch writes (function arguments are
//    distinct buffers, as bufferization assumes);
//  - only operations without memory effects (or allocations) lie between it
//    and the batch's previous launch.
// The batched launch sits where the batch's last launch was: everything
// the earlier ones use is defined by then, and nothing between them
// touched memory.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/GPU/Passes.h"
#include "neo/Codegen/Utils/BufferEffects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOGPUBATCHLAUNCHES
#include "neo/Codegen/GPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;

namespace {

/// A launch that may join a batch: its sizes and the buffers it reads and
/// writes.
struct Candidate {
  gpu::LaunchOp launch;
  int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int64_t blocks = 0;      // grid[0] * grid[1] * grid[2]
  int64_t sharedBytes = 0; // dynamic
  SmallVector<Type> workgroup;
  llvm::DenseSet<Value> reads, writes;

  /// Whether its threads are independent of how they form blocks: a 1-D
  /// block, no shared memory, no barrier, shuffle or other GPU operation.
  /// Such a kernel runs in any batch of 1-D blocks, its threads renumbered.
  bool flexible = false;

  /// Whether the two can share one launch's block size and shared memory.
  bool sameShape(const Candidate &o) const {
    return llvm::equal(block, o.block) && sharedBytes == o.sharedBytes && workgroup == o.workgroup;
  }
  bool oneDimBlock() const { return block[1] == 1 && block[2] == 1; }
  /// Whether it can run in a launch of `anchor`'s shape.
  bool runsIn(const Candidate &anchor) const {
    return sameShape(anchor) || (flexible && anchor.oneDimBlock() &&
                                 (anchor.block[0] >= 32 || anchor.block[0] >= block[0]));
  }
  /// Its blocks in a launch of `anchor`'s shape.
  int64_t blocksIn(const Candidate &anchor) const {
    if (sameShape(anchor))
      return blocks;
    int64_t threads = blocks * block[0];
    return (threads + anchor.block[0] - 1) / anchor.block[0];
  }
};

/// The launch shape of a batch: its first member that is not flexible, else
/// the member with the largest block (a one-thread serial kernel must not
/// make a pointwise kernel run in one-thread blocks).
const Candidate &anchorOf(ArrayRef<Candidate> batch) {
  for (const Candidate &c : batch)
    if (!c.flexible)
      return c;
  const Candidate *best = &batch.front();
  for (const Candidate &c : batch)
    if (c.block[0] > best->block[0])
      best = &c;
  return *best;
}

/// Whether `c` may join `batch` (a shape they all run in), and the blocks
/// of the batched launch then.
std::optional<int64_t> joinedBlocks(ArrayRef<Candidate> batch, const Candidate &c) {
  SmallVector<Candidate> all(batch.begin(), batch.end());
  all.push_back(c);
  const Candidate &anchor = anchorOf(all);
  int64_t total = 0;
  for (const Candidate &m : all) {
    if (!m.runsIn(anchor))
      return std::nullopt;
    total += m.blocksIn(anchor);
  }
  return total;
}

int64_t constantOf(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return -1;
}

/// The buffer `v` views: a function argument or an allocation outside
/// `launch`; a null Value when it is the launch's own memory (its workgroup
/// buffers, dynamic shared memory, allocations in its body); nullopt when
/// it is not known.
std::optional<Value> rootOf(Value v, gpu::LaunchOp launch) {
  v = mlir::neo::baseBuffer(v);
  if (Operation *def = v.getDefiningOp()) {
    if (launch->isProperAncestor(def) &&
        isa<memref::AllocOp, memref::AllocaOp, gpu::DynamicSharedMemoryOp>(def))
      return Value();
    if (isa<memref::AllocOp>(def))
      return v;
    return std::nullopt;
  }
  auto arg = cast<BlockArgument>(v);
  Operation *owner = arg.getOwner()->getParentOp();
  if (isa<func::FuncOp>(owner))
    return v;
  if (owner == launch.getOperation())
    return Value(); // a workgroup or private attribution
  return std::nullopt;
}

std::optional<Candidate> asCandidate(gpu::LaunchOp launch) {
  Candidate c;
  c.launch = launch;
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      !launch.getPrivateAttributions().empty() || !launch.getBody().hasOneBlock() ||
      launch.hasClusterSize())
    return std::nullopt;
  if (Value bytes = launch.getDynamicSharedMemorySize()) {
    c.sharedBytes = constantOf(bytes);
    if (c.sharedBytes < 0)
      return std::nullopt;
  }
  for (BlockArgument a : launch.getWorkgroupAttributions())
    c.workgroup.push_back(a.getType());
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value dims[2][3] = {{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}};
  for (int i = 0; i < 3; ++i) {
    c.grid[i] = constantOf(dims[0][i]);
    c.block[i] = constantOf(dims[1][i]);
    if (c.grid[i] < 1 || c.block[i] < 1 || c.grid[i] > INT32_MAX)
      return std::nullopt;
  }
  c.blocks = c.grid[0] * c.grid[1] * c.grid[2];
  if (c.blocks > INT32_MAX)
    return std::nullopt;
  // Flexible: only the dialects of plain per-thread code, and no memory of
  // its own (an allocation could be shared memory).
  c.flexible = c.workgroup.empty() && !c.sharedBytes && c.oneDimBlock();
  bool indexOps = false;
  launch.getBody().walk([&](Operation *op) {
    StringRef dialect = op->getDialect() ? op->getDialect()->getNamespace() : "";
    if (!isa<gpu::TerminatorOp>(op) &&
        (!llvm::is_contained(
             {"arith", "math", "memref", "scf", "vector", "affine", "index", "cf", "ub"},
             dialect) ||
         isa<memref::AllocOp, memref::AllocaOp>(op)))
      c.flexible = false;
    // The launch's indices as ops (not its region arguments) would read the
    // batched launch's.
    if (isa<gpu::BlockIdOp, gpu::GridDimOp, gpu::GlobalIdOp, gpu::ClusterIdOp, gpu::ClusterDimOp,
            gpu::ClusterBlockIdOp, gpu::ClusterDimBlocksOp>(op))
      indexOps = true;
  });
  if (indexOps)
    return std::nullopt;
  bool known = true;
  launch.getBody().walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    // A barrier synchronizes the block's threads (every block runs one
    // body, so it stays uniform); a thread's cp.async groups are its own
    // (their copies' effects are the copies'); terminators touch nothing.
    if (!effects &&
        (isa<gpu::BarrierOp, NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp>(op) ||
         op->hasTrait<OpTrait::IsTerminator>()))
      return WalkResult::advance();
    if (!effects) {
      known = false;
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list) {
      if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(e.getEffect()))
        continue;
      Value v = e.getValue();
      // (ldmatrix declares its read without the buffer: its source.)
      if (auto ldmatrix = dyn_cast<nvgpu::LdMatrixOp>(op); ldmatrix && !v)
        v = ldmatrix.getSrcMemref();
      std::optional<Value> root = v ? rootOf(v, launch) : std::nullopt;
      if (!root) {
        known = false;
        return WalkResult::interrupt();
      }
      if (!*root)
        continue; // private memory
      (isa<MemoryEffects::Read>(e.getEffect()) ? c.reads : c.writes).insert(*root);
    }
    return WalkResult::advance();
  });
  if (!known)
    return std::nullopt;
  return c;
}

bool independent(const Candidate &a, const Candidate &b) {
  for (Value w : a.writes)
    if (b.reads.contains(w) || b.writes.contains(w))
      return false;
  for (Value w : b.writes)
    if (a.reads.contains(w))
      return false;
  return true;
}

/// Whether `op` (between two launches) may be moved past: no memory effects
/// but allocations.
bool movable(Operation *op) {
  if (isa<gpu::LaunchOp>(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return isPure(op);
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::all_of(list, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect());
  });
}

/// Whether `op` defines a value that `launch` uses (as an operand or in its
/// body).
bool definesUsedBy(Operation *op, gpu::LaunchOp launch) {
  for (Value r : op->getResults())
    for (Operation *user : r.getUsers())
      if (launch->isAncestor(user))
        return true;
  return false;
}

/// Moves each launch up to just after an earlier launch of its shape, when
/// it is independent of every launch in between and nothing in between
/// defines what it uses or touches memory otherwise (the fill before a
/// split-K GEMM then joins an earlier fill). Launches run in order on one
/// stream, so this only reorders independent work.
using Candidates = llvm::DenseMap<Operation *, std::optional<Candidate>>;

/// The candidate of `launch` in `candidates` (by reference: no copy of its
/// sets), nullopt when it has none.
const std::optional<Candidate> &candidateOf(const Candidates &candidates, Operation *launch) {
  static const std::optional<Candidate> none;
  auto it = candidates.find(launch);
  return it == candidates.end() ? none : it->second;
}
void hoistToPartners(Block &block, const Candidates &candidates) {
  SmallVector<gpu::LaunchOp> launches;
  for (Operation &op : block)
    if (auto l = dyn_cast<gpu::LaunchOp>(op))
      launches.push_back(l);
  for (gpu::LaunchOp l : launches) {
    const std::optional<Candidate> &c = candidateOf(candidates, l);
    if (!c)
      continue;
    // Constants it uses (its sizes) move up with it. The partner: the
    // nearest launch of its shape, else the nearest it can run in.
    SmallVector<Operation *> constants;
    gpu::LaunchOp partner;
    size_t partnerConstants = 0;
    for (Operation *p = l->getPrevNode(); p; p = p->getPrevNode()) {
      if (auto k = dyn_cast<gpu::LaunchOp>(p)) {
        const std::optional<Candidate> &ck = candidateOf(candidates, k);
        if (!ck || !independent(*ck, *c))
          break;
        if (ck->sameShape(*c)) {
          partner = k, partnerConstants = constants.size();
          break;
        }
        if (!partner && joinedBlocks({*ck}, *c))
          partner = k, partnerConstants = constants.size();
        continue;
      }
      if (!movable(p))
        break;
      if (definesUsedBy(p, l)) {
        if (p->getNumOperands() || !matchPattern(p, m_Constant()))
          break;
        constants.push_back(p);
      }
    }
    if (!partner || partner->getNextNode() == l.getOperation())
      continue;
    Operation *after = partner;
    for (Operation *cst : llvm::reverse(ArrayRef(constants).take_front(partnerConstants))) {
      cst->moveAfter(after);
      after = cst;
    }
    l->moveAfter(after);
  }
}

/// Replaces the launches of `batch` (two or more) by one, at the last one.
void buildBatch(ArrayRef<Candidate> batch) {
  gpu::LaunchOp last = batch.back().launch;
  OpBuilder b(last);
  Location loc = last.getLoc();
  const Candidate &first = anchorOf(batch);
  int64_t total = 0;
  for (const Candidate &c : batch)
    total += c.blocksIn(first);
  auto cst = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  Value shared = first.sharedBytes
                     ? arith::ConstantIntOp::create(b, loc, first.sharedBytes, 32).getResult()
                     : Value();
  auto launch =
      gpu::LaunchOp::create(b, loc, cst(total), cst(1), cst(1), cst(first.block[0]),
                            cst(first.block[1]), cst(first.block[2]), shared,
                            /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, first.workgroup);
  Block &body = launch.getBody().front();
  b.setInsertionPointToEnd(&body);
  Value bid = launch.getBlockIds().x;
  int64_t offset = 0;
  SmallVector<StringRef> kinds;
  // Each part's other neo.* attributes (a side, masks, key parts), their
  // names without the prefix: what the batched launch's bodies are.
  SmallVector<Attribute> partAttrs;
  bool anyPartAttrs = false;
  for (const Candidate &c : batch) {
    SmallVector<NamedAttribute> own;
    for (NamedAttribute attr : c.launch->getDiscardableAttrs()) {
      StringRef name = attr.getName().getValue();
      if (name.consume_front("neo.") && name != "kernel" && name != "batched" &&
          name != "batched_attrs")
        own.push_back(b.getNamedAttr(name, attr.getValue()));
    }
    anyPartAttrs |= !own.empty();
    partAttrs.push_back(b.getDictionaryAttr(own));
  }
  for (const Candidate &c : batch) {
    // Blocks [offset, offset + blocks) run this launch's body.
    int64_t blocks = c.blocksIn(first);
    Value begin = cst(offset), end = cst(offset + blocks);
    Value inRange = arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, bid, begin),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, bid, end));
    auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    OpBuilder in = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
    IRMapping map;
    gpu::LaunchOp old = c.launch;
    // The block index this place stands for: x fastest, as CUDA orders.
    Value rel = arith::SubIOp::create(in, loc, bid, begin);
    auto idx = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(in, loc, v); };
    Value tid = launch.getThreadIds().x;
    bool renumbered = !c.sameShape(first);
    if (renumbered) {
      // A flexible kernel in blocks of another size: its thread `lin` (of
      // blocks x its block size) is this launch's thread of the range.
      Value lin = arith::AddIOp::create(
          in, loc, arith::MulIOp::create(in, loc, rel, idx(first.block[0])), tid);
      int64_t threads = c.blocks * c.block[0];
      if (blocks * first.block[0] != threads) {
        auto guard = scf::IfOp::create(
            in, loc, arith::CmpIOp::create(in, loc, arith::CmpIPredicate::ult, lin, idx(threads)),
            /*withElse=*/false);
        in.setInsertionPointToStart(&guard.getThenRegion().front());
      }
      rel = arith::DivUIOp::create(in, loc, lin, idx(c.block[0]));
      tid = arith::RemUIOp::create(in, loc, lin, idx(c.block[0]));
    }
    Value x =
        c.grid[1] * c.grid[2] == 1 ? rel : arith::RemUIOp::create(in, loc, rel, idx(c.grid[0]));
    Value yz =
        c.grid[1] * c.grid[2] == 1 ? idx(0) : arith::DivUIOp::create(in, loc, rel, idx(c.grid[0]));
    Value y = c.grid[2] == 1 ? yz : arith::RemUIOp::create(in, loc, yz, idx(c.grid[1]));
    Value z = c.grid[2] == 1 ? idx(0) : arith::DivUIOp::create(in, loc, yz, idx(c.grid[1]));
    map.map(old.getBlockIds().x, x);
    map.map(old.getBlockIds().y, y);
    map.map(old.getBlockIds().z, z);
    map.map(old.getThreadIds().x, tid);
    map.map(old.getThreadIds().y, launch.getThreadIds().y);
    map.map(old.getThreadIds().z, launch.getThreadIds().z);
    map.map(old.getGridSizeX(), idx(c.grid[0]));
    map.map(old.getGridSizeY(), idx(c.grid[1]));
    map.map(old.getGridSizeZ(), idx(c.grid[2]));
    if (renumbered) {
      map.map(old.getBlockSizeX(), idx(c.block[0]));
      map.map(old.getBlockSizeY(), idx(1));
      map.map(old.getBlockSizeZ(), idx(1));
    } else {
      map.map(old.getBlockSizeX(), launch.getBlockSizeX());
      map.map(old.getBlockSizeY(), launch.getBlockSizeY());
      map.map(old.getBlockSizeZ(), launch.getBlockSizeZ());
    }
    for (auto [o, n] : llvm::zip(old.getWorkgroupAttributions(), launch.getWorkgroupAttributions()))
      map.map(o, n);
    for (Operation &op : old.getBody().front().without_terminator())
      in.clone(op, map);
    // One kind per part (in step with neo.batched_attrs).
    auto kind = old->getAttrOfType<StringAttr>("neo.kernel");
    kinds.push_back(kind ? kind.getValue() : StringRef("unnamed"));
    offset += blocks;
  }
  gpu::TerminatorOp::create(b, loc);
  launch->setAttr("neo.kernel", b.getStringAttr("batched"));
  SmallVector<Attribute> parts;
  for (StringRef k : kinds)
    parts.push_back(b.getStringAttr(k));
  launch->setAttr("neo.batched", b.getArrayAttr(parts));
  if (anyPartAttrs)
    launch->setAttr("neo.batched_attrs", b.getArrayAttr(partAttrs));
  for (const Candidate &c : batch)
    c.launch->erase();
}

struct NeoGpuBatchLaunchesPass
    : public mlir::neo::impl::NeoGpuBatchLaunchesBase<NeoGpuBatchLaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxBlocks < 1) {
      getOperation().emitError("neo-gpu-batch-launches: max-blocks must be positive");
      return signalPassFailure();
    }
    SmallVector<SmallVector<Candidate>> batches;
    for (Block &block : getOperation().getBody()) {
      // Each launch analysed once (moves do not change what it touches).
      Candidates candidates;
      for (Operation &op : block)
        if (auto l = dyn_cast<gpu::LaunchOp>(op))
          candidates[l] = asCandidate(l);
      hoistToPartners(block, candidates);
      SmallVector<Candidate> batch;
      auto close = [&] {
        if (batch.size() > 1)
          batches.push_back(std::move(batch));
        batch.clear();
      };
      for (Operation &op : block) {
        auto launch = dyn_cast<gpu::LaunchOp>(op);
        if (!launch) {
          if (!movable(&op))
            close();
          continue;
        }
        const std::optional<Candidate> &c = candidateOf(candidates, launch);
        if (!c) {
          close();
          continue;
        }
        std::optional<int64_t> joined = batch.empty() ? std::nullopt : joinedBlocks(batch, *c);
        bool fits = joined && *joined <= maxBlocks &&
                    llvm::all_of(batch, [&](const Candidate &o) { return independent(o, *c); });
        if (!fits)
          close();
        batch.push_back(std::move(*c));
      }
      close();
    }
    for (ArrayRef<Candidate> batch : batches)
      buildBatch(batch);
  }
};

} // namespace
