//===- NeoDialect.cpp - The neo dialect -----------------------------------===//
#include "neo/Dialect/Neo/IR/NeoDialect.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::neo;

#include "neo/Dialect/Neo/IR/NeoEnums.cpp.inc"
#include "neo/Dialect/Neo/IR/NeoOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "neo/Dialect/Neo/IR/NeoAttrs.cpp.inc"

namespace {
/// Neo ops are pure functions of their operands (bodies only see their block
/// arguments), so calls of functions made of them can always be inlined.
struct NeoInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Operation *, bool) const final { return true; }
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final { return true; }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final { return true; }
};
} // namespace

void NeoDialect::initialize() {
  addInterfaces<NeoInlinerInterface>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "neo/Dialect/Neo/IR/NeoAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "neo/Dialect/Neo/IR/NeoOps.cpp.inc"
      >();
}

Operation *NeoDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  if (auto elements = dyn_cast<ElementsAttr>(value))
    if (isa<RankedTensorType>(type) && elements.getType() == type)
      return ConstantOp::create(builder, loc, type, elements);
  if (auto typed = dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Schedule attributes: the rules are NeoScheduleRules'.
//===----------------------------------------------------------------------===//

static LogicalResult checked(function_ref<InFlightDiagnostic()> emitError, StringRef what,
                             const std::string &reason) {
  if (reason.empty())
    return success();
  return emitError() << "invalid " << what << " schedule: " << reason;
}

LogicalResult CpuGemmScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t mr,
                                          int64_t nr, int64_t mc, int64_t nc, int64_t kc,
                                          int64_t threads) {
  return checked(emitError, "cpu_gemm",
                 schedules::checkCpuGemm({mr, nr, mc, nc, kc, threads}, /*vectorWidth=*/0));
}

LogicalResult CpuGenericScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                             int64_t vector, int64_t threads) {
  return checked(emitError, "cpu_generic", schedules::checkCpuGeneric({vector, threads}));
}

LogicalResult GpuGemmScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t bm,
                                          int64_t bn, int64_t bk, int64_t tm, int64_t tn,
                                          int64_t wm, int64_t wn, StringRef mma, int64_t minBlocks,
                                          int64_t stages) {
  schedules::GpuGemmParams p;
  p.bm = bm, p.bn = bn, p.bk = bk, p.tm = tm, p.tn = tn, p.wm = wm, p.wn = wn;
  p.minBlocks = minBlocks, p.stages = stages;
  if (!schedules::parseGpuMma(mma.str(), p.mma))
    return emitError()
           << "invalid gpu_gemm schedule: mma must be \"none\", \"tf32\", \"wgmma\" or \"auto\"";
  return checked(emitError, "gpu_gemm", schedules::checkGpuGemm(p, schedules::GpuGemmKernel::Any));
}

LogicalResult GpuGenericScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                             int64_t block) {
  return checked(emitError, "gpu_generic", schedules::checkGpuGeneric({block}));
}
