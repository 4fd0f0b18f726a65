//===- GpuTarget.h - What GPU kernel planners know of the device -*- C++ -*-===//
//
// The GPU beyond its chip (sm_90, sm_90a): what the planners of
// neo-gpu-select-schedules and neo-gpu-map size their grids by.
// neo-lower-to-ptx's `sm-count` sets it (and neo-eqsat-fuse's GPU costs).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_GPU_GPUTARGET_H
#define NEO_CODEGEN_GPU_GPUTARGET_H

#include <cstdint>

namespace mlir {
namespace neo {

/// What the kernel planners know of the GPU beyond its chip: its SMs
/// (H100 SXM and H200: 132; H100 PCIe: 114; A100: 108), which set how many
/// blocks keep it busy: the wgmma tiles chosen, when K and key tiles split
/// over blocks, and how many warps a block of the fused attention and the
/// score tiles runs. Kernels are correct on any GPU of the chip; this only
/// steers their speed.
struct GpuTarget {
  /// The most SMs an option may give (the planners multiply it by threads).
  static constexpr int64_t kMaxSmCount = 1 << 16;

  int64_t smCount = 132;
  /// Threads that keep every SM issuing (4 warps each).
  int64_t busyThreads() const { return smCount * 4 * 32; }
};

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_GPU_GPUTARGET_H
