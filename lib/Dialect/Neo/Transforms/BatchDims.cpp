//===- BatchDims.cpp - neo-check-batch: rows that never mix ---------------===//
//
// A function can run on a batch of any size without recompiling (neo.torch's
// `dynamic` size parameter) when it computes each row of its results along
// the batch dim from the same rows of its inputs only: then the batch runs in
// chunks of the compiled size, the last chunk padded. The batch dims are the
// dims whose extent is the pass's `extent` (a value bound to the size
// parameter for this check only, so that it stands out among the literal
// extents). A neo.compute keeps rows apart when its batched operands are all
// read along one parallel dim `b` of its own, exactly at `b` in their batch
// dim, nothing else it reads, bounds or computes depends on `b`, and its
// result's batch dim is `b`. A result of batch extent that reads no batched
// operand is a broadcast (its rows alike), as is a splat constant.
//
//===----------------------------------------------------------------------===//
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOCHECKBATCH
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {
constexpr int64_t kNone = -1;

/// The dim of `type` whose extent is `extent` (kNone without one); failure
/// where two dims have it.
FailureOr<int64_t> batchDimOf(Type type, int64_t extent) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return kNone;
  int64_t found = kNone;
  for (auto [i, e] : llvm::enumerate(shaped.getShape()))
    if (e == extent) {
      if (found != kNone)
        return failure();
      found = int64_t(i);
    }
  return found;
}

bool mapUses(AffineMap map, unsigned dim, int64_t except = kNone) {
  for (auto [i, e] : llvm::enumerate(map.getResults()))
    if (int64_t(i) != except && e.isFunctionOfDim(dim))
      return true;
  return false;
}

struct Checker {
  int64_t extent = 0;
  DenseMap<Value, int64_t> dims;

  int64_t dimOf(Value v) {
    auto it = dims.find(v);
    return it == dims.end() ? kNone : it->second;
  }
  void set(Value v, int64_t d) { dims[v] = d; }

  LogicalResult check(ComputeOp op) {
    unsigned parallel = op.getNumParallelDims();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<AffineMap> indexMaps;
    if (std::optional<ArrayAttr> attr = op.getIndexMaps())
      for (Attribute a : *attr)
        indexMaps.push_back(cast<AffineMapAttr>(a).getValue());
    // Every operand (reads, then index reads) with its map and batch dim.
    struct Read {
      Value value;
      AffineMap map;
      int64_t dim;
      std::string what;
    };
    SmallVector<Read> reads;
    for (auto [i, v] : llvm::enumerate(op.getInputs()))
      reads.push_back({v, maps[i], dimOf(v), "operand #" + std::to_string(i)});
    for (auto [j, v] : llvm::enumerate(op.getIndexInputs()))
      reads.push_back({v, indexMaps[j], dimOf(v), "index operand #" + std::to_string(j)});
    std::optional<unsigned> loop;
    for (const Read &r : reads) {
      if (r.dim == kNone)
        continue;
      auto d = dyn_cast<AffineDimExpr>(r.map.getResult(r.dim));
      if (d && d.getPosition() >= parallel)
        return op.emitError("sums over the batch dim of its ")
               << r.what << " (d" << d.getPosition()
               << " is a reduction dim): rows of the batch would mix";
      if (!d) {
        std::string at;
        llvm::raw_string_ostream os(at);
        r.map.getResult(r.dim).print(os);
        return op.emitError("reads the batch dim of its ")
               << r.what << " at " << at
               << ", not at one parallel dim of its own: rows of the batch would mix";
      }
      if (loop && *loop != d.getPosition())
        return op.emitError("reads batched operands along two dims (d")
               << *loop << " and d" << d.getPosition() << ")";
      loop = d.getPosition();
    }
    FailureOr<int64_t> outDim = batchDimOf(op.getType(), extent);
    if (failed(outDim))
      return op.emitError("has two dims of the batch's extent ") << extent;
    if (!loop) {
      // No batched operand: rows alike where the result has a batch dim.
      set(op.getResult(), *outDim);
      if (*outDim == kNone)
        return success();
      loop = unsigned(*outDim);
    } else if (*outDim != int64_t(*loop)) {
      return op.emitError("reads its batched operands along d")
             << *loop
             << (*outDim == kNone ? ", which its result does not keep (a reduction over the batch, "
                                    "or fewer rows)"
                                  : ", not along its result's batch dim");
    }
    unsigned b = *loop;
    for (const Read &r : reads)
      if (mapUses(r.map, b, r.dim))
        return op.emitError("reads its ")
               << r.what << " at a point that depends on the batch index d" << b
               << " (outside its batch dim): rows of the batch would mix";
    if (std::optional<IntegerSet> domain = op.getDomain())
      for (AffineExpr e : domain->getConstraints())
        if (e.isFunctionOfDim(b))
          return op.emitError("bounds its iterations by the batch index d") << b;
    WalkResult usesIndex = op.getBody().walk([&](IndexOp index) {
      return static_cast<int64_t>(index.getDim()) == int64_t(b) ? WalkResult::interrupt()
                                                                : WalkResult::advance();
    });
    if (usesIndex.wasInterrupted())
      return op.emitError("computes with the value of the batch index d") << b;
    set(op.getResult(), b);
    return success();
  }

  LogicalResult check(func::FuncOp func) {
    for (BlockArgument arg : func.getArguments()) {
      FailureOr<int64_t> d = batchDimOf(arg.getType(), extent);
      if (failed(d))
        return func.emitError("argument #")
               << arg.getArgNumber() << " has two dims of the batch's extent " << extent;
      set(arg, *d);
    }
    for (Operation &op : func.getBody().front()) {
      if (auto compute = dyn_cast<ComputeOp>(op)) {
        if (failed(check(compute)))
          return failure();
        continue;
      }
      if (auto constant = dyn_cast<ConstantOp>(op)) {
        FailureOr<int64_t> d = batchDimOf(constant.getType(), extent);
        auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
        if (failed(d) || (*d != kNone && !splat))
          return constant.emitError("is a constant of the batch's extent whose rows differ");
        set(constant.getResult(), *d);
        continue;
      }
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
          if (dimOf(v) == kNone)
            return ret.emitError("returns result #")
                   << i << " without the batch dim: it cannot be computed in chunks";
          func.setResultAttr(i, "neo.batch_dim",
                             IntegerAttr::get(IntegerType::get(func.getContext(), 64), dimOf(v)));
        }
        continue;
      }
      return op.emitError("is not supported with a dynamic batch dim (only neo.compute and "
                          "neo.constant are checked)");
    }
    for (BlockArgument arg : func.getArguments())
      if (dimOf(arg) != kNone)
        func.setArgAttr(arg.getArgNumber(), "neo.batch_dim",
                        IntegerAttr::get(IntegerType::get(func.getContext(), 64), dimOf(arg)));
    return success();
  }
};

struct NeoCheckBatchPass : public mlir::neo::impl::NeoCheckBatchBase<NeoCheckBatchPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func || func.isExternal()) {
      module.emitError("neo-check-batch: no function named '") << function << "'";
      return signalPassFailure();
    }
    if (extent < 2) {
      module.emitError("neo-check-batch: extent must be at least 2, not ")
          << static_cast<int64_t>(extent);
      return signalPassFailure();
    }
    Checker checker;
    checker.extent = extent;
    if (failed(checker.check(func)))
      return signalPassFailure();
  }
};
} // namespace
