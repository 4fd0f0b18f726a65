//===- NeoInterfaces.h - Interfaces of the neo dialect ----------*- C++ -*-===//
#ifndef NEO_DIALECT_NEO_IR_NEOINTERFACES_H
#define NEO_DIALECT_NEO_IR_NEOINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "neo/Dialect/Neo/IR/NeoInterfaces.h.inc"

#endif // NEO_DIALECT_NEO_IR_NEOINTERFACES_H
