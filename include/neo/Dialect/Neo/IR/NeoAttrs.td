//===- NeoAttrs.td - Attributes of the neo dialect ---------*- tablegen -*-===//
#ifndef NEO_ATTRS_TD
#define NEO_ATTRS_TD

include "neo/Dialect/Neo/IR/NeoBase.td"
include "mlir/IR/EnumAttr.td"
include "neo/Dialect/Neo/IR/NeoScheduleAttrs.td"

def Neo_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a neo.compute combines the body's values over its reduction dims", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Sum", 1, "sum">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">,
      I32EnumAttrCase<"Prod", 4, "prod">
    ]> {
  let cppNamespace = "::mlir::neo";
  let genSpecializedAttr = 0;
}

def Neo_ReductionKindAttr : EnumAttr<Neo_Dialect, Neo_ReductionKind, "reduction">;

#endif // NEO_ATTRS_TD
