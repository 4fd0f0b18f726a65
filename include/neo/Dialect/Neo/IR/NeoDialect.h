//===- NeoDialect.h - The neo dialect ---------------------------*- C++ -*-===//
#ifndef NEO_DIALECT_NEO_IR_NEODIALECT_H
#define NEO_DIALECT_NEO_IR_NEODIALECT_H

#include "mlir/IR/Dialect.h"

#include "neo/Dialect/Neo/IR/NeoOpsDialect.h.inc"

#endif // NEO_DIALECT_NEO_IR_NEODIALECT_H
