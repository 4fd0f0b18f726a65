//===- PtxScan.h - The kernels of a PTX text --------------------*- C++ -*-===//
//
// A scan of PTX text for its kernels and their parameter sizes, with which a
// bundle's launches are checked before anything reaches the driver. LLVM-free.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_SUPPORT_PTXSCAN_H
#define NEO_RUNTIME_SUPPORT_PTXSCAN_H

#include <cstddef>
#include <string>
#include <vector>

namespace mlir {
namespace neo {

/// The kernels (.entry functions) of a PTX text and the byte sizes of their
/// parameters; `paramsKnown` is false where a parameter list did not parse.
struct PtxKernel {
  std::string name;
  bool paramsKnown = false;
  std::vector<size_t> paramSizes;
};
std::vector<PtxKernel> listPtxKernels(const std::string &ptx);

} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_SUPPORT_PTXSCAN_H
