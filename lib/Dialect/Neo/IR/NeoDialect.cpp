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
