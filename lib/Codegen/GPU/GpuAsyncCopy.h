//===- GpuAsyncCopy.h - 16-byte cp.async tiles into shared memory -*- C++ -*-===//
//
// The asynchronous copies that the tensor-core kernels (GpuAttentionMma.cpp,
// GpuScoreTilesMma.cpp) stage their operands with: 16-byte `cp.async`
// (nvgpu.device_async_copy, L1 bypassed) of a tile of rows, zero-filled
// (src-size 0) past the rows or the valid columns.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUASYNCCOPY_H
#define NEO_LIB_CODEGEN_GPU_GPUASYNCCOPY_H

#include "GpuKernelBuilder.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir {
namespace neo {
namespace gpukernel {

/// Elements of a 16-byte copy.
inline int64_t vectorOf(Type elem) { return 128 / elem.getIntOrFloatBitWidth(); }

/// Issues the 16-byte cp.async copies of `rows` x `cols` elements (cols a
/// multiple of 16 bytes) of `global` into `tile` at [stage][r][c] (or [r][c]
/// without a stage): element (r, c) is `global` at indicesOf(first + r, c),
/// zero (src-size 0) past `rowLimit` rows or `valid` columns (a multiple of
/// 16 bytes too).
inline void copyTile(KB &kb, Value tid, int64_t threads, Value tile, Value stage, int64_t rows,
                     int64_t cols, int64_t valid, int64_t rowLimit,
                     function_ref<SmallVector<Value>(Value, Value)> indicesOf, Value global,
                     Value first) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto type = cast<MemRefType>(global.getType());
  auto [strides, offset0] = type.getStridesAndOffset();
  Value flat = kb.flat(global);
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  int64_t vec = vectorOf(type.getElementType()), chunks = cols / vec, total = rows * chunks;
  for (int64_t i = 0; i < (total + threads - 1) / threads; ++i) {
    OpBuilder::InsertionGuard guard(b);
    Value e = kb.add(tid, i * threads);
    if ((i + 1) * threads > total) {
      auto inTile = scf::IfOp::create(b, loc, kb.lt(e, total), /*withElse=*/false);
      b.setInsertionPointToStart(inTile.thenBlock());
    }
    Value r = kb.div(e, chunks), c = kb.mul(kb.rem(e, chunks), vec);
    Value row = kb.add(first, r);
    Value ok = kb.lt(row, rowLimit);
    if (valid < cols)
      ok = kb.andI(ok, kb.lt(c, valid));
    Value offset = kb.idx(0);
    for (auto [index, stride] : llvm::zip(indicesOf(row, c), strides))
      offset = kb.add(offset, kb.mul(index, stride));
    Value from = arith::SelectOp::create(b, loc, ok, offset, kb.idx(0));
    Value count = arith::SelectOp::create(b, loc, ok, kb.idx(vec), kb.idx(0));
    SmallVector<Value> at = {r, c};
    if (stage)
      at.insert(at.begin(), stage);
    nvgpu::DeviceAsyncCopyOp::create(b, loc, tokenType, tile, at, flat, ValueRange{from},
                                     b.getIndexAttr(vec), count, b.getUnitAttr());
  }
}

/// Closes the cp.async group of the copies issued since the last one.
inline void commitCopies(KB &kb) { NVVM::CpAsyncCommitGroupOp::create(kb.b, kb.loc); }

/// Waits for every cp.async group of the thread.
inline void waitCopies(KB &kb) {
  NVVM::CpAsyncWaitGroupOp::create(kb.b, kb.loc, kb.b.getI32IntegerAttr(0));
}

/// The top of a double-buffered tile loop over [first, end) whose tile
/// `first` was issued into buffer 0 before it: waits for this tile's copies,
/// a barrier (this tile has landed for every thread, and every warp is done
/// with the previous tile, whose buffer the next copies fill), then issues
/// `copy(tile + 1, other buffer)` when there is a next tile and commits.
/// Returns this tile's buffer (0 or 1).
inline Value pipelineTile(KB &kb, Value tile, Value first, Value end,
                          function_ref<void(Value tile, Value buffer)> copy) {
  waitCopies(kb);
  gpu::BarrierOp::create(kb.b, kb.loc);
  Value buffer = kb.rem(kb.sub(tile, first), 2);
  Value next = kb.add(tile, 1);
  auto more = scf::IfOp::create(
      kb.b, kb.loc, arith::CmpIOp::create(kb.b, kb.loc, arith::CmpIPredicate::ult, next, end),
      /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(kb.b);
    kb.b.setInsertionPointToStart(more.thenBlock());
    copy(next, kb.sub(kb.idx(1), buffer));
  }
  commitCopies(kb);
  return buffer;
}

} // namespace gpukernel
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUASYNCCOPY_H
