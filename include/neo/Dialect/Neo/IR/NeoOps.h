//===- NeoOps.h - Operations of the neo dialect -----------------*- C++ -*-===//
#ifndef NEO_DIALECT_NEO_IR_NEOOPS_H
#define NEO_DIALECT_NEO_IR_NEOOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IntegerSet.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "neo/Dialect/Neo/IR/NeoDialect.h"

#include "neo/Dialect/Neo/IR/NeoEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "neo/Dialect/Neo/IR/NeoAttrs.h.inc"

#define GET_OP_CLASSES
#include "neo/Dialect/Neo/IR/NeoOps.h.inc"

#endif // NEO_DIALECT_NEO_IR_NEOOPS_H
