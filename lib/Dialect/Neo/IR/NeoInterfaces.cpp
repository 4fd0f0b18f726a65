//===- NeoInterfaces.cpp - Interfaces of the neo dialect ------------------===//
#include "neo/Dialect/Neo/IR/NeoInterfaces.h"

#include "neo/Dialect/Neo/IR/NeoInterfaces.cpp.inc"
