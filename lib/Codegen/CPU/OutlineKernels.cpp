//===- OutlineKernels.cpp - neo-outline-kernels ---------------------------===//
//
// Moves each top-level loop nest of a large function into a private
// function of its own, so that LLVM, whose compile time grows faster than
// linearly with a function's size, sees many small functions.
//
//===----------------------------------------------------------------------===//
#include "Outlining.h"
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOOUTLINEKERNELS
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

/// Outlines `loop` (a top-level op of `parent`) into a private function
/// inserted after `after` (which becomes the new function); returns false
/// when a value it reads cannot be passed.
bool outline(Operation *loop, func::FuncOp parent, Operation *&after, SymbolTable &symbols,
             unsigned index) {
  // What the nest reads from outside: its operands and the values its
  // regions use from above.
  llvm::SetVector<Value> captured;
  for (Value v : loop->getOperands())
    captured.insert(v);
  getUsedValuesDefinedAbove(loop->getRegions(), captured);
  // Results come back through the same calling convention.
  if (!llvm::all_of(loop->getResults(), passableByBarePointer))
    return false;
  SmallVector<Value> arguments;
  SmallVector<Operation *> constants;
  for (Value v : captured) {
    Operation *def = v.getDefiningOp();
    if (def && def->getNumResults() == 1 && def->getNumOperands() == 0 &&
        matchPattern(v, m_Constant())) {
      constants.push_back(def);
      continue;
    }
    if (!passableByBarePointer(v))
      return false;
    arguments.push_back(v);
  }

  OpBuilder b(parent.getContext());
  b.setInsertionPointAfter(after);
  SmallVector<Type> argTypes;
  for (Value v : arguments)
    argTypes.push_back(v.getType());
  auto callee = createOutlinedFunction(b, loop->getLoc(),
                                       (parent.getName() + "_kernel" + llvm::Twine(index)).str(),
                                       b.getFunctionType(argTypes, loop->getResultTypes()));
  symbols.insert(callee); // renames it if the name is taken
  after = callee;

  Block *body = callee.addEntryBlock();
  OpBuilder inside = OpBuilder::atBlockEnd(body);
  IRMapping mapping;
  for (auto [v, arg] : llvm::zip(arguments, body->getArguments()))
    mapping.map(v, arg);
  for (Operation *c : constants)
    inside.clone(*c, mapping);
  Operation *copy = inside.clone(*loop, mapping);
  func::ReturnOp::create(inside, loop->getLoc(), copy->getResults());

  OpBuilder at(loop);
  auto call = func::CallOp::create(at, loop->getLoc(), callee, arguments);
  loop->replaceAllUsesWith(call.getResults());
  loop->erase();
  return true;
}

struct NeoOutlineKernelsPass
    : public mlir::neo::impl::NeoOutlineKernelsBase<NeoOutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minKernels < 0) {
      getOperation().emitError("neo-outline-kernels: min-kernels must be >= 0, got ")
          << static_cast<int64_t>(minKernels);
      return signalPassFailure();
    }
    if (minKernels == 0)
      return;
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto parent : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (parent.isExternal())
        continue;
      SmallVector<Operation *> loops;
      for (Operation &op : parent.getBody().front())
        if (isa<scf::ForOp, scf::ParallelOp>(op))
          loops.push_back(&op);
      if (static_cast<int64_t>(loops.size()) < minKernels)
        continue;
      unsigned index = 0;
      Operation *after = parent;
      for (Operation *loop : loops)
        if (outline(loop, parent, after, symbols, index))
          ++index;
    }
  }
};

} // namespace
