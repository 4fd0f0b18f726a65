//===- OutlineParallelBodies.cpp - neo-outline-parallel-bodies ------------===//
//
// Moves the body of each large scf.parallel into a private function that
// takes the loop's indices and the values the body reads as arguments, so
// that the function OpenMP outlines around the loop is a small one calling
// it, and LLVM compiles the body once instead of unswitching copies of it
// in the OpenMP-outlined function.
//
//===----------------------------------------------------------------------===//
#include "Outlining.h"
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOOUTLINEPARALLELBODIES
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

/// How a value read by the body reaches the outlined function.
struct Captures {
  SmallVector<Value> arguments;         // passed
  llvm::SetVector<Operation *> rebuilt; // cloned, operands before users
  llvm::DenseSet<Value> seen;
};

/// Decides how `v` (defined outside the body) gets into the function: a
/// constant or a side-effect-free op whose result the calling convention
/// cannot pass (a view of dynamic shape, its metadata) is cloned, with its
/// operands captured in turn; anything else passable is an argument.
/// Returns false when `v` can be neither.
bool capture(Value v, Captures &c) {
  if (!c.seen.insert(v).second)
    return true;
  Operation *def = v.getDefiningOp();
  if (def && def->getNumOperands() == 0 && def->getNumResults() == 1 &&
      matchPattern(v, m_Constant())) {
    c.rebuilt.insert(def);
    return true;
  }
  if (passableByBarePointer(v)) {
    c.arguments.push_back(v);
    return true;
  }
  if (!def || def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!capture(operand, c))
      return false;
  c.rebuilt.insert(def); // after its operands' definitions
  return true;
}

/// Moves the body of `loop` into a new function inserted after `after`
/// (which becomes it); returns false (and changes nothing) where the body
/// reads a value that can be neither passed nor rebuilt.
bool outline(scf::ParallelOp loop, func::FuncOp parent, Operation *&after, SymbolTable &symbols,
             unsigned index) {
  Block *body = loop.getBody();
  Captures c;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(loop.getRegion(), above);
  for (Value v : above)
    if (!capture(v, c))
      return false;

  MLIRContext *ctx = parent.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(after);
  SmallVector<Type> argTypes(loop.getNumLoops(), b.getIndexType());
  for (Value v : c.arguments)
    argTypes.push_back(v.getType());
  // (Never inlined back into the OpenMP-outlined function.)
  auto callee =
      createOutlinedFunction(b, loop.getLoc(), (parent.getName() + "_body" + Twine(index)).str(),
                             b.getFunctionType(argTypes, {}));
  symbols.insert(callee); // renames it if the name is taken
  after = callee;

  Block *entry = callee.addEntryBlock();
  IRMapping mapping;
  for (auto [iv, arg] : llvm::zip(loop.getInductionVars(), entry->getArguments()))
    mapping.map(iv, arg);
  for (auto [v, arg] : llvm::zip(c.arguments, entry->getArguments().drop_front(loop.getNumLoops())))
    mapping.map(v, arg);
  OpBuilder inside = OpBuilder::atBlockEnd(entry);
  for (Operation *op : c.rebuilt)
    inside.clone(*op, mapping);
  for (Operation &op : body->without_terminator())
    inside.clone(op, mapping);
  func::ReturnOp::create(inside, loop.getLoc());

  // The loop's body: the call, then its terminator.
  // (Last first: every op's users go before it.)
  while (Operation *last = body->getTerminator()->getPrevNode())
    last->erase();
  OpBuilder at(body->getTerminator());
  SmallVector<Value> operands(loop.getInductionVars());
  llvm::append_range(operands, c.arguments);
  func::CallOp::create(at, loop.getLoc(), callee, operands);
  return true;
}

struct NeoOutlineParallelBodiesPass
    : public mlir::neo::impl::NeoOutlineParallelBodiesBase<NeoOutlineParallelBodiesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minOps < 0) {
      getOperation().emitError("neo-outline-parallel-bodies: min-ops must be >= 0, got ")
          << static_cast<int64_t>(minOps);
      return signalPassFailure();
    }
    if (minOps == 0)
      return;
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto parent : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (parent.isExternal())
        continue;
      // The outermost parallel loops whose bodies are large and yield
      // nothing (no reductions).
      SmallVector<scf::ParallelOp> loops;
      parent.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
        if (!loop.getInitVals().empty())
          return WalkResult::skip();
        int64_t ops = 0;
        loop.getBody()->walk([&](Operation *) { ++ops; });
        if (ops - 1 >= minOps) // not counting the terminator
          loops.push_back(loop);
        return WalkResult::skip();
      });
      unsigned index = 0;
      Operation *after = parent;
      for (scf::ParallelOp loop : loops)
        if (outline(loop, parent, after, symbols, index))
          ++index;
    }
  }
};

} // namespace
