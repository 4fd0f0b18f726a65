//===- KernelCost.h - Bytes and weighted work of neo kernels ----*- C++ -*-===//
//
// The two measures the neo-level cost models share: how many bytes a tensor
// holds, and how much work a neo.compute does (neo-eqsat-fuse's kernel
// costs, neo-autodiff's choice between saving and recomputing a forward
// value, row blocking's block sizes).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_DIALECT_NEO_TRANSFORMS_KERNELCOST_H
#define NEO_LIB_DIALECT_NEO_TRANSFORMS_KERNELCOST_H

#include "neo/Dialect/Neo/IR/NeoOps.h"

namespace mlir {
namespace neo {

/// The bytes a ranked tensor of type `t` holds (0 for anything else).
int64_t tensorBytes(Type t);

/// The work of a kernel in multiply-adds: its valid iterations times its
/// body's operations, weighted by what they cost on a vector unit (a divide
/// or a square root about 4, exp/log/tanh polynomials about 16), so that
/// recomputing a transcendental per element is not mistaken for free.
double kernelFlops(ComputeOp op);

} // namespace neo
} // namespace mlir

#endif // NEO_LIB_DIALECT_NEO_TRANSFORMS_KERNELCOST_H
