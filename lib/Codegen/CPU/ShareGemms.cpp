//===- ShareGemms.cpp - neo-share-gemms -----------------------------------===//
//
// Gives each variant of the scheduled GEMMs of a module (element type, the
// role order of each operand, schedule) one routine on memrefs of dynamic
// sizes and strides, and makes each GEMM a call of it, so that neo-tile
// generates the packed GEMM code once per variant instead of once per GEMM.
//
//===----------------------------------------------------------------------===//
#include "Outlining.h"
#include "neo/Codegen/CPU/Passes.h"
#include "neo/Codegen/CPU/Schedule.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

#include <map>

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOSHAREGEMMS
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

/// A scheduled GEMM.
struct Gemm {
  linalg::LinalgOp op;
  GemmSchedule schedule; // threads = 1 where it runs serially
  bool overwrite;        // C is zeros on entry (neo.overwrite)
};

/// The arguments of a routine, in order: for each of A, B and C its base
/// buffer, offset, sizes and outer strides. Per argument, its value where
/// the operand's memref type fixes it (nullopt for the buffers and for what
/// is dynamic).
using ArgConstants = SmallVector<std::optional<int64_t>>;

ArgConstants argConstants(const GemmAnalysis &analysis) {
  ArgConstants out;
  for (const GemmOperandLayout &l : analysis.layouts) {
    auto type = cast<MemRefType>(l.mem.getType());
    SmallVector<int64_t> strides;
    int64_t offset = ShapedType::kDynamic;
    if (failed(type.getStridesAndOffset(strides, offset)))
      strides.assign(type.getRank(), ShapedType::kDynamic);
    auto known = [](int64_t v) -> std::optional<int64_t> {
      if (ShapedType::isDynamic(v))
        return std::nullopt;
      return v;
    };
    out.push_back(std::nullopt); // the base buffer
    out.push_back(known(offset));
    for (int64_t size : type.getShape())
      out.push_back(known(size));
    for (int64_t i = 0; i + 1 < type.getRank(); ++i)
      out.push_back(known(strides[i]));
  }
  return out;
}

/// The values every call passes: an argument keeps a constant only where
/// all calls agree on it.
ArgConstants agreedConstants(ArrayRef<ArgConstants> calls) {
  ArgConstants agreed = calls.front();
  for (const ArgConstants &call : calls.drop_front())
    for (auto [a, c] : llvm::zip(agreed, call))
      if (a != c)
        a = std::nullopt;
  return agreed;
}

/// The routine of one variant: for each of A, B and C its base buffer
/// (memref<elem>), offset, sizes and outer strides; inside, the views and
/// the contraction with the variant's schedule.
func::FuncOp buildRoutine(OpBuilder &b, Location loc, StringRef name, const GemmAnalysis &analysis,
                          const GemmSchedule &schedule, bool overwrite,
                          const ArgConstants &constants) {
  MLIRContext *ctx = b.getContext();
  Type elem = analysis.layouts[2].type.getElementType();
  auto base = MemRefType::get({}, elem);
  Type index = b.getIndexType();
  SmallVector<Type> argTypes;
  for (const GemmOperandLayout &l : analysis.layouts) {
    int64_t rank = l.roleOfResult.size();
    argTypes.push_back(base);
    argTypes.append(1 + rank + (rank - 1), index); // offset, sizes, outer strides
  }
  // One copy for every caller.
  auto func = createOutlinedFunction(b, loc, name, b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  OpBuilder in = OpBuilder::atBlockEnd(entry);

  // The iteration space: batch (where an operand has it), m, n, k.
  bool batched = llvm::any_of(analysis.layouts, [](const GemmOperandLayout &l) {
    return llvm::is_contained(l.roleOfResult, 0);
  });
  SmallVector<int> dimOfRole =
      batched ? SmallVector<int>{0, 1, 2, 3} : SmallVector<int>{-1, 0, 1, 2};
  unsigned numDims = batched ? 4 : 3;
  SmallVector<Value> views;
  SmallVector<AffineMap> maps;
  unsigned arg = 0;
  // An argument that every call passes as the same constant is that
  // constant inside (static views: neo-tile's code for static sizes).
  auto value = [&](unsigned i, int64_t &known) -> OpFoldResult {
    known = constants[i] ? *constants[i] : ShapedType::kDynamic;
    if (constants[i])
      return in.getIndexAttr(*constants[i]);
    return entry->getArgument(i);
  };
  for (const GemmOperandLayout &l : analysis.layouts) {
    int64_t rank = l.roleOfResult.size();
    Value buffer = entry->getArgument(arg++);
    int64_t offsetKnown;
    OpFoldResult offset = value(arg++, offsetKnown);
    SmallVector<OpFoldResult> sizes, strides;
    SmallVector<int64_t> shape(rank), strideKnown(rank, 1);
    for (int64_t i = 0; i < rank; ++i)
      sizes.push_back(value(arg++, shape[i]));
    for (int64_t i = 0; i + 1 < rank; ++i)
      strides.push_back(value(arg++, strideKnown[i]));
    strides.push_back(in.getIndexAttr(1));
    // Dynamic sizes and strides where the calls differ; the innermost
    // stride is 1 (vector loads need it).
    auto type = MemRefType::get(shape, elem, StridedLayoutAttr::get(ctx, offsetKnown, strideKnown));
    views.push_back(
        memref::ReinterpretCastOp::create(in, loc, type, buffer, offset, sizes, strides));
    SmallVector<AffineExpr> results;
    for (int role : l.roleOfResult)
      results.push_back(in.getAffineDimExpr(dimOfRole[role]));
    maps.push_back(AffineMap::get(numDims, 0, results, ctx));
  }
  SmallVector<utils::IteratorType> iterators(numDims, utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  auto gemm = linalg::GenericOp::create(
      in, loc, ValueRange{views[0], views[1]}, ValueRange{views[2]}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = arith::MulFOp::create(nb, nloc, args[0], args[1]);
        linalg::YieldOp::create(nb, nloc,
                                ValueRange{arith::AddFOp::create(nb, nloc, args[2], product)});
      });
  gemm->setAttr(kScheduleAttrName, CpuGemmScheduleAttr::get(ctx, schedule));
  if (overwrite)
    gemm->setAttr(kOverwriteAttrName, UnitAttr::get(ctx));
  func::ReturnOp::create(in, loc);
  return func;
}

/// Replaces the GEMM by a call of `routine` with its (collapsed) operands'
/// base buffers, offsets, sizes and outer strides.
void callRoutine(IRRewriter &rewriter, linalg::LinalgOp op, const GemmAnalysis &analysis,
                 func::FuncOp routine) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> args;
  for (const GemmOperandLayout &l : analysis.layouts) {
    auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc, l.mem);
    args.push_back(meta.getBaseBuffer());
    args.push_back(meta.getOffset());
    llvm::append_range(args, meta.getSizes());
    llvm::append_range(args, meta.getStrides().drop_back());
  }
  func::CallOp::create(rewriter, loc, routine, args);
  rewriter.eraseOp(op);
}

struct NeoShareGemmsPass : public mlir::neo::impl::NeoShareGemmsBase<NeoShareGemmsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (minUses < 0) {
      module.emitError("neo-share-gemms: min-uses must be >= 0, got ")
          << static_cast<int64_t>(minUses);
      return signalPassFailure();
    }
    std::optional<bool> bInPlaceGemms = bInPlaceSetting(bInPlace);
    if (!bInPlaceGemms) {
      module.emitError() << "neo-share-gemms: b-in-place must be auto, on or off, not '" << bInPlace
                         << "'";
      return signalPassFailure();
    }
    if (minUses == 0)
      return;

    // The variants, in the order their first GEMM appears.
    llvm::MapVector<std::string, SmallVector<Gemm>, std::map<std::string, unsigned>> variants;
    module.walk([&](linalg::LinalgOp op) {
      auto attr = dyn_cast_or_null<CpuGemmScheduleAttr>(op->getAttr(kScheduleAttrName));
      if (!attr || !op.hasPureBufferSemantics())
        return;
      FailureOr<GemmAnalysis> analysis = analyzeGemmOperands(op, nullptr);
      if (failed(analysis) || analysis->problem.inputType != analysis->problem.elementType)
        return; // An implicit GEMM, or mixed precision (not for the CPU).
      // A GEMM inside a parallel loop (a row-blocked kernel's) keeps its
      // code: a call there would keep the OpenMP lowering's alloca scope
      // around the loop body (a call may allocate on the stack), whose
      // single block the loops inside cannot become.
      if (op->getParentOfType<scf::ForallOp>() || op->getParentOfType<scf::ParallelOp>())
        return;
      Gemm gemm{op, attr.getParams(), op->hasAttr(kOverwriteAttrName)};
      if (op->hasAttr("neo.serial"))
        gemm.schedule.threads = 1; // as neo-tile runs it
      // The op's own schedule must hold for its vector width (neo-tile's
      // error otherwise, on the op itself).
      if (!schedules::checkCpuGemm(gemm.schedule, analysis->problem.vectorWidth).empty())
        return;
      if (*bInPlaceGemms &&
          gemmReadsBInPlace(analysis->problem, analysis->layouts[1], gemm.schedule))
        return; // Its own code: B read in place needs its sizes.
      const GemmSchedule &s = gemm.schedule;
      std::string key = analysis->problem.elementType + "_";
      for (char c : analysis->problem.layout)
        key += c == ',' ? '_' : c;
      key += "_" + std::to_string(s.mr) + "x" + std::to_string(s.nr) + "_mc" +
             std::to_string(s.mc) + "_nc" + std::to_string(s.nc) + "_kc" + std::to_string(s.kc) +
             "_t" + std::to_string(s.threads) + (gemm.overwrite ? "_overwrite" : "");
      variants[key].push_back(gemm);
    });

    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    for (auto &[key, gemms] : variants) {
      if (static_cast<int64_t>(gemms.size()) < minUses)
        continue;
      // Collapses each role's dims into one index before each op.
      std::vector<std::pair<Gemm *, GemmAnalysis>> calls;
      SmallVector<ArgConstants> constants;
      for (Gemm &gemm : gemms) {
        rewriter.setInsertionPoint(gemm.op);
        FailureOr<GemmAnalysis> analysis = analyzeGemmOperands(gemm.op, &rewriter);
        if (failed(analysis))
          continue; // (Accepted above without collapsing: cannot happen.)
        constants.push_back(argConstants(*analysis));
        calls.emplace_back(&gemm, std::move(*analysis));
      }
      if (calls.empty())
        continue;
      auto &[first, firstAnalysis] = calls.front();
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      func::FuncOp routine =
          buildRoutine(b, first->op.getLoc(), "__neo_gemm_" + key, firstAnalysis, first->schedule,
                       first->overwrite, agreedConstants(constants));
      symbols.insert(routine); // renames it if the name is taken
      for (auto &[gemm, analysis] : calls)
        callRoutine(rewriter, gemm->op, analysis, routine);
    }
  }
};

} // namespace
