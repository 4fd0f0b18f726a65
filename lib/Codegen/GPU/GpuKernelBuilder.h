//===- GpuKernelBuilder.h - Helpers to emit GPU kernels ---------*- C++ -*-===//
//
// Small builder helpers shared by the GPU GEMM and generic code generators:
// index arithmetic, flat views of memrefs and launches with constant sizes.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_DIALECT_NEO_TRANSFORMS_GPUKERNELBUILDER_H
#define NEO_LIB_DIALECT_NEO_TRANSFORMS_GPUKERNELBUILDER_H

#include "neo/Codegen/GPU/GpuTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <string>

namespace mlir {
namespace neo {
namespace gpukernel {

/// The loop roles of a (batched) GEMM's tile sizes and strides.
constexpr int kB = 0, kM = 1, kN = 2, kK = 3;

struct KB {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, idx(y)); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) {
    if (y == 0)
      return idx(0);
    return y == 1 ? x : mul(x, idx(y));
  }
  Value div(Value x, int64_t y) { return y == 1 ? x : arith::DivUIOp::create(b, loc, x, idx(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, idx(y)); }
  Value min(Value x, int64_t y) { return arith::MinUIOp::create(b, loc, x, idx(y)); }
  Value lt(Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, idx(y));
  }
  Value andI(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::AndIOp::create(b, loc, x, y);
  }
  Value zero(Type t) { return arith::ConstantOp::create(b, loc, b.getZeroAttr(t)); }

  /// Splits `linear` (below the extents' product) into indices over
  /// `extents`, the last one fastest.
  SmallVector<Value> delinearize(Value linear, ArrayRef<int64_t> extents) {
    SmallVector<Value> ivs(extents.size());
    for (int64_t i = extents.size() - 1; i > 0; --i) {
      ivs[i] = extents[i] == 1 ? idx(0) : rem(linear, extents[i]);
      linear = div(linear, extents[i]);
    }
    if (!extents.empty())
      ivs[0] = linear;
    return ivs;
  }

  /// A 1-D view of an identity-layout memref (a no-op for rank 1).
  Value flat(Value mem) {
    auto type = cast<MemRefType>(mem.getType());
    if (type.getRank() == 1)
      return mem;
    SmallVector<ReassociationIndices> all(1);
    for (int64_t i = 0; i < type.getRank(); ++i)
      all[0].push_back(i);
    if (type.getRank() == 0)
      return memref::ExpandShapeOp::create(b, loc, MemRefType::get({1}, type.getElementType()), mem,
                                           SmallVector<ReassociationIndices>{},
                                           ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    return memref::CollapseShapeOp::create(b, loc, mem, all);
  }
};

/// Whether `type` is a static, contiguous, identity-layout memref that flat()
/// can view as one dimension.
inline bool isFlatViewable(Type type) {
  auto m = dyn_cast<MemRefType>(type);
  return m && m.hasStaticShape() && m.getLayout().isIdentity() &&
         (!m.getMemorySpace() || (isa<IntegerAttr>(m.getMemorySpace()) &&
                                  cast<IntegerAttr>(m.getMemorySpace()).getInt() == 0));
}

/// CUDA's grid limits: 2^31 - 1 blocks along x, 65535 along y and z.
constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridYZ = 65535;

/// "" when a grid of x * y * z blocks is within CUDA's limits, else why not.
inline std::string gridLimitError(int64_t x, int64_t y, int64_t z = 1) {
  const char *axis = x > kMaxGridX ? "x" : y > kMaxGridYZ ? "y" : z > kMaxGridYZ ? "z" : nullptr;
  if (!axis)
    return "";
  return "its grid of " + std::to_string(x) + " x " + std::to_string(y) + " x " +
         std::to_string(z) + " blocks passes CUDA's limit along " + axis + " (" +
         std::to_string(*axis == 'x' ? kMaxGridX : kMaxGridYZ) + ")";
}

/// The memref type of a workgroup (shared memory) buffer.
inline MemRefType sharedType(ArrayRef<int64_t> shape, Type elem) {
  MLIRContext *ctx = elem.getContext();
  return MemRefType::get(shape, elem, MemRefLayoutAttrInterface(),
                         gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

/// Creates a 1-D or 3-D launch with constant sizes (and, when positive, that
/// many bytes of dynamic shared memory); the builder is left at
/// the start of its body, before the terminator.
inline gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, ArrayRef<int64_t> grid,
                                  ArrayRef<int64_t> block, TypeRange workgroup = {},
                                  int64_t dynamicSharedBytes = 0) {
  auto c = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  auto at = [](ArrayRef<int64_t> v, size_t i) { return i < v.size() ? v[i] : 1; };
  auto launch = gpu::LaunchOp::create(
      b, loc, c(at(grid, 0)), c(at(grid, 1)), c(at(grid, 2)), c(at(block, 0)), c(at(block, 1)),
      c(at(block, 2)),
      dynamicSharedBytes ? arith::ConstantIntOp::create(b, loc, dynamicSharedBytes, 32).getResult()
                         : Value(),
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, workgroup);
  Block &body = launch.getBody().front();
  b.setInsertionPointToEnd(&body);
  auto term = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(term);
  return launch;
}

/// The indices of a block-tiled GEMM kernel's thread: its warp, its lane's
/// MMA fragment group (lane / 4) and place in it (lane % 4), the batch (grid
/// z) and the block tile's first row and column (grid y, x).
struct GemmThread {
  Value tid, lane, warp, group, inGroup, batch, m0, n0;
};
inline GemmThread gemmThread(KB &kb, gpu::LaunchOp launch, int64_t bm, int64_t bn) {
  GemmThread t;
  t.tid = launch.getThreadIds().x;
  t.lane = kb.rem(t.tid, 32), t.warp = kb.div(t.tid, 32);
  t.group = kb.div(t.lane, 4), t.inGroup = kb.rem(t.lane, 4);
  t.batch = launch.getBlockIds().z;
  t.m0 = kb.mul(launch.getBlockIds().y, bm);
  t.n0 = kb.mul(launch.getBlockIds().x, bn);
  return t;
}

/// Limits of the sm_90 GPUs the kernels target (H100/H200): static shared
/// memory a block has without opting in, and dynamic shared memory it may
/// opt in to. (Their SMs are GpuTarget's.)
constexpr int64_t kMaxStaticShared = 48 * 1024;
constexpr int64_t kMaxDynamicShared = 227 * 1024;

/// Byte offsets of buffers of `sizes` laid out one after another in shared
/// memory, each 16-byte aligned; returns the bytes in all.
inline int64_t alignedOffsets(ArrayRef<int64_t> sizes, SmallVectorImpl<int64_t> &offsets) {
  int64_t bytes = 0;
  offsets.clear();
  for (int64_t size : sizes) {
    offsets.push_back(bytes);
    bytes += llvm::alignTo(size, 16);
  }
  return bytes;
}

/// The indices of the batch dims `batch` (the last fastest) of a linear
/// index (a grid dim over all of them).
inline SmallVector<Value> batchIndices(KB &kb, Value linear, ArrayRef<int64_t> batch) {
  SmallVector<Value> ivs(batch.size());
  for (int64_t k = batch.size() - 1; k >= 0; --k) {
    ivs[k] = k == 0 ? linear : kb.rem(linear, batch[k]);
    linear = k == 0 ? linear : kb.div(linear, batch[k]);
  }
  return ivs;
}

/// Clones the expression `v` of a linalg body (its block arguments, and
/// outer constants if wanted, already in `map`) at the builder's point,
/// each linalg.index op replaced by `indexValue(dim)`.
inline Value cloneBodyExpr(OpBuilder &b, Value v, IRMapping &map,
                           llvm::function_ref<Value(unsigned)> indexValue) {
  if (Value mapped = map.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    map.map(v, indexValue(index.getDim()));
    return map.lookup(v);
  }
  for (Value operand : def->getOperands())
    cloneBodyExpr(b, operand, map, indexValue);
  Operation *copy = b.clone(*def, map);
  return copy->getResult(cast<OpResult>(v).getResultNumber());
}

/// Loads `mem[indices]` when `inRange`, else zero.
inline Value loadOrZero(OpBuilder &b, Location loc, Value mem, ValueRange indices, Value inRange) {
  Type elem = cast<MemRefType>(mem.getType()).getElementType();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{elem}, inRange, /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(b, loc, memref::LoadOp::create(b, loc, mem, indices).getResult());
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loc, arith::ConstantOp::create(b, loc, b.getZeroAttr(elem)).getResult());
  return ifOp.getResult(0);
}

/// Stages `rows` x `cols` elements of a global operand into the shared
/// buffer `tile` (row pitch from its type), zero past `valid` rows or `cols`
/// columns: element (r, c) reads `global` at indicesOf(first + r, c).
inline void stageTile(OpBuilder &b, Location loc, Value tid, int64_t threads, Value tile,
                      int64_t rows, int64_t cols, int64_t validCols, int64_t rowLimit,
                      llvm::function_ref<SmallVector<Value>(Value row, Value col)> indicesOf,
                      Value global, Value first) {
  KB kb{b, loc};
  auto loop = scf::ForOp::create(b, loc, tid, kb.idx(rows * cols), kb.idx(threads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value idx = loop.getInductionVar();
  Value r = kb.div(idx, cols), c = kb.rem(idx, cols);
  Value row = kb.add(first, r);
  Value inRange = kb.lt(row, rowLimit);
  if (validCols < cols)
    inRange = kb.andI(inRange, kb.lt(c, validCols));
  Value v = loadOrZero(b, loc, global, indicesOf(row, c), inRange);
  memref::StoreOp::create(b, loc, v, tile, ValueRange{r, c});
}

/// The launch's dynamic shared memory as bytes (memref<?xi8, workgroup>).
inline Value dynamicSharedBytes(OpBuilder &b, Location loc) {
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  return gpu::DynamicSharedMemoryOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr, workgroup));
}

/// The shared buffers of `types` of a launch: its workgroup attributions,
/// or (with `offsets`, from alignedOffsets) views of its dynamic shared
/// memory.
inline SmallVector<Value> sharedBuffers(OpBuilder &b, Location loc, gpu::LaunchOp launch,
                                        ArrayRef<Type> types, ArrayRef<int64_t> offsets) {
  SmallVector<Value> buffers;
  if (offsets.empty()) {
    llvm::append_range(buffers, launch.getWorkgroupAttributions());
    return buffers;
  }
  Value smem = dynamicSharedBytes(b, loc);
  for (auto [type, offset] : llvm::zip(types, offsets))
    buffers.push_back(memref::ViewOp::create(b, loc, cast<MemRefType>(type), smem,
                                             arith::ConstantIndexOp::create(b, loc, offset),
                                             ValueRange{}));
  return buffers;
}

} // namespace gpukernel
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_DIALECT_NEO_TRANSFORMS_GPUKERNELBUILDER_H
