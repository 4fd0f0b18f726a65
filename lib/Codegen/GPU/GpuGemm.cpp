//===- GpuGemm.cpp - Block-tiled GEMM kernels for the GPU -----------------===//
//
// A contraction C[b, m, n] += A[b, m, k] * B[b, k, n] (any layout the GEMM
// analysis accepts: transposes, batches, collapsed multi-dims) becomes one
// launch of a grid of BM x BN tiles (z: the batch). Each block steps through K
// by BK, promoting the A and B tiles to shared memory (four-element vector
// loads from global memory where the layout allows), then
//
//  - SIMT: each thread accumulates a TM x TN register tile with FMAs. Its
//    rows and columns are interleaved in groups of four so that the shared
//    memory reads of a warp are 16-byte vectors without bank conflicts. A is
//    stored transposed (k-major) with 4 floats of padding per row;
//  - tensor cores: each warp accumulates (WM/16) x (WN/16) WMMA 16x16 tiles
//    (gpu.subgroup_mma_*; m16n16k8 tf32 or m16n16k16 f16) starting from C.
//
// Tiles that extents do not divide are handled by clamped loads and guarded
// stores (SIMT only: tensor cores need exact tiles and fall back otherwise).
//
//===----------------------------------------------------------------------===//
#include "GpuGemmImplicitMma.h"
#include "GpuGemmImplicitWgmma.h"
#include "GpuGemmMmaSync.h"
#include "GpuGemmWgmma.h"
#include "GpuKernelBuilder.h"
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/Utils/BufferEffects.h"
#include "neo/Codegen/Utils/ImplicitGemm.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

#include <algorithm>
#include <functional>
#include <optional>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::gpukernel;

GpuGemmSchedule GpuGemmSchedule::fromParams(const schedules::GpuGemmParams &p) {
  GpuGemmSchedule s;
  s.bm = p.bm, s.bn = p.bn, s.bk = p.bk, s.tm = p.tm, s.tn = p.tn, s.wm = p.wm, s.wn = p.wn;
  s.mma = schedules::toString(p.mma);
  s.minBlocks = p.minBlocks;
  s.stages = p.stages;
  return s;
}

std::string GpuGemmSchedule::toParams(schedules::GpuGemmParams &p) const {
  p.bm = bm, p.bn = bn, p.bk = bk, p.tm = tm, p.tn = tn, p.wm = wm, p.wn = wn;
  p.minBlocks = minBlocks, p.stages = stages;
  if (!schedules::parseGpuMma(mma, p.mma))
    return "mma must be \"none\", \"tf32\", \"wgmma\" or \"auto\"";
  return "";
}

bool GpuGemmSchedule::isValid(bool tensorCores, std::string &error) const {
  schedules::GpuGemmParams p;
  error = toParams(p);
  if (!error.empty())
    return false;
  error = schedules::checkGpuGemm(p, schedules::GpuGemmKernel::Any);
  if (error.empty())
    error = schedules::checkGpuGemm(p, tensorCores ? schedules::GpuGemmKernel::TensorCores
                                                   : schedules::GpuGemmKernel::Simt);
  return error.empty();
}

namespace {

/// One GEMM operand as a flat buffer with per-role strides.
struct Operand {
  Value flat;
  Type elem;
  int64_t stride[4]; // batch, m, n, k
  /// Implicit GEMMs (convolutions and other bilinear generics): computes the
  /// element at (batch, row role index, col role index) in the accumulator
  /// type instead of loading it through strides, and for C, adds a value.
  std::function<Value(Value, Value, Value)> implicitLoad;
  /// Implicit operands that are plain reads: the read (for cp.async).
  std::function<ImplicitGemm::Read(Value, Value, Value)> implicitRead;
  std::function<void(Value, Value, Value, Value, gpukernel::CUpdate)> implicitAdd;
  /// For implicit operands: the role whose consecutive indices are closest
  /// in memory (consecutive threads load along it).
  int fastRole = -1;
  /// The element offset of (batch, row role index, col role index).
  Value offset(KB &k, Value batch, int rowRole, Value row, int colRole, Value col) const {
    Value o = k.add(k.mul(batch, stride[0]), k.mul(row, stride[rowRole]));
    return k.add(o, k.mul(col, stride[colRole]));
  }
};

struct GemmKernel {
  OpBuilder &b;
  Location loc;
  const GemmProblem &p;
  const GpuGemmSchedule &s;
  Operand A, B, C;
  Type acc; // C's element type

  KB k() { return KB{b, loc}; }
  /// The flat operands and strides, for the pipelined tensor-core kernels.
  GemmBuffers buffers() const { return {A.flat, B.flat, C.flat, A.stride, B.stride, C.stride}; }

  /// Loads `count` = 1 or 4 consecutive elements of `op` along its
  /// contiguous role at (row, col), clamped into bounds and zeroed outside.
  /// Returns the values converted to `to`.
  SmallVector<Value> loadTile(const Operand &op, Value batch, int rowRole, Value row,
                              int64_t rowExtent, int colRole, Value col, int64_t colExtent,
                              int64_t count, bool vectorAlongCol, Type to) {
    KB kb = k();
    // Extents are 0 where tiles never overhang (no check needed).
    // Sequenced: argument evaluation order differs between compilers.
    Value rowOk = rowExtent ? kb.lt(row, rowExtent) : Value();
    Value colOk = colExtent ? kb.lt(col, colExtent) : Value();
    Value valid = kb.andI(rowOk, colOk);
    // Clamp into bounds so that the load itself is always legal.
    int64_t lastRow = rowExtent - (count > 1 && !vectorAlongCol ? count : 1);
    int64_t lastCol = colExtent - (count > 1 && vectorAlongCol ? count : 1);
    Value r = rowExtent ? kb.min(row, lastRow) : row;
    Value c = colExtent ? kb.min(col, lastCol) : col;
    Value offset = op.offset(kb, batch, rowRole, r, colRole, c);
    SmallVector<Value> out;
    if (op.implicitLoad) {
      Value v = op.implicitLoad(batch, r, c);
      out.push_back(v.getType() == to ? v : arith::ExtFOp::create(b, loc, to, v).getResult());
      if (valid)
        out.back() = arith::SelectOp::create(b, loc, valid, out.back(), kb.zero(to));
      return out;
    }
    if (count == 1) {
      out.push_back(memref::LoadOp::create(b, loc, op.flat, offset));
    } else {
      auto vt = VectorType::get({count}, op.elem);
      unsigned bytes = count * op.elem.getIntOrFloatBitWidth() / 8;
      Value v = vector::LoadOp::create(b, loc, vt, op.flat, offset, /*nontemporal=*/false,
                                       llvm::MaybeAlign(bytes));
      for (int64_t e = 0; e < count; ++e)
        out.push_back(vector::ExtractOp::create(b, loc, v, e));
    }
    for (Value &v : out) {
      if (op.elem != to)
        v = arith::ExtFOp::create(b, loc, to, v);
      if (valid)
        v = arith::SelectOp::create(b, loc, valid, v, kb.zero(to));
    }
    return out;
  }
};

/// Whether 4-wide vector loads along `role` are aligned and in bounds for
/// every tile: the role is contiguous, its extent and every other stride are
/// multiples of 4.
bool canVectorize(const int64_t stride[4], int role, int64_t extent, ArrayRef<int> others,
                  ArrayRef<int64_t> otherExtents) {
  if (stride[role] != 1 || extent % 4)
    return false;
  for (auto [r, e] : llvm::zip(others, otherExtents))
    if (e > 1 && stride[r] % 4)
      return false;
  return true;
}

} // namespace

/// SIMT kernel. With `splits` > 1, grid z enumerates (batch, split) pairs,
/// each block covers K range [split * kChunk, (split + 1) * kChunk) and adds
/// its partial sums into C atomically. With `start` (C's constant initial
/// value), the sums start from it and replace C without reading it.
static void buildSimt(GemmKernel &g, gpu::LaunchOp launch, Value As, Value Bs, int64_t splits,
                      int64_t kChunk, Value start = Value(),
                      function_ref<void(Value, Value, Value)> epilogue = nullptr) {
  OpBuilder &b = g.b;
  Location loc = g.loc;
  KB kb = g.k();
  const GpuGemmSchedule &s = g.s;
  const GemmProblem &p = g.p;
  int64_t T = s.simtThreads(), BM = s.bm, BN = s.bn, BK = s.bk, TM = s.tm, TN = s.tn;
  Type acc = g.acc;

  Value tid = launch.getThreadIds().x;
  Value batch = launch.getBlockIds().z;
  Value kBegin = kb.idx(0), kEnd = kb.idx(p.k);
  if (splits > 1) {
    Value split = kb.rem(batch, splits);
    batch = kb.div(batch, splits);
    kBegin = kb.mul(split, kChunk);
    kEnd = arith::MinUIOp::create(b, loc, kb.add(kBegin, kChunk), kb.idx(p.k));
  }
  Value m0 = kb.mul(launch.getBlockIds().y, BM);
  Value n0 = kb.mul(launch.getBlockIds().x, BN);
  Value tRow = kb.div(tid, BN / TN), tCol = kb.rem(tid, BN / TN);
  // Extents with a sign: 0 when tiles always fit (no bounds checks).
  int64_t mCheck = p.m % BM ? p.m : 0, nCheck = p.n % BN ? p.n : 0, kCheck = p.k % BK ? p.k : 0;

  bool vecA = canVectorize(g.A.stride, kK, p.k, {kB, kM}, {p.batch, p.m}) && BK % 4 == 0;
  bool vecB = canVectorize(g.B.stride, kN, p.n, {kB, kK}, {p.batch, p.k}) && BN % 4 == 0;

  SmallVector<Value> init(TM * TN, start ? start : kb.zero(acc));
  auto loop = scf::ForOp::create(b, loc, kBegin, kEnd, kb.idx(BK), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k0 = loop.getInductionVar();
    // A tile -> As[kk][i] (k-major, padded rows).
    if (vecA && (BM * BK / 4) % T == 0) {
      for (int64_t r = 0; r < BM * BK / 4 / T; ++r) {
        Value e = kb.add(tid, r * T);
        Value i = kb.div(e, BK / 4), kk = kb.mul(kb.rem(e, BK / 4), 4);
        auto vals = g.loadTile(g.A, batch, kM, kb.add(m0, i), mCheck, kK, kb.add(k0, kk), kCheck, 4,
                               /*vectorAlongCol=*/true, acc);
        for (int64_t x = 0; x < 4; ++x)
          memref::StoreOp::create(b, loc, vals[x], As, ValueRange{kb.add(kk, x), i});
      }
    } else {
      bool kFast = g.A.implicitLoad ? g.A.fastRole == kK : g.A.stride[kK] == 1;
      for (int64_t r = 0; r < BM * BK / T; ++r) {
        Value e = kb.add(tid, r * T);
        Value i = kFast ? kb.div(e, BK) : kb.rem(e, BM);
        Value kk = kFast ? kb.rem(e, BK) : kb.div(e, BM);
        auto vals = g.loadTile(g.A, batch, kM, kb.add(m0, i), mCheck, kK, kb.add(k0, kk), kCheck, 1,
                               true, acc);
        memref::StoreOp::create(b, loc, vals[0], As, ValueRange{kk, i});
      }
    }
    // B tile -> Bs[kk][j].
    if (vecB && (BK * BN / 4) % T == 0) {
      for (int64_t r = 0; r < BK * BN / 4 / T; ++r) {
        Value e = kb.add(tid, r * T);
        Value kk = kb.div(e, BN / 4), j = kb.mul(kb.rem(e, BN / 4), 4);
        auto vals = g.loadTile(g.B, batch, kK, kb.add(k0, kk), kCheck, kN, kb.add(n0, j), nCheck, 4,
                               true, acc);
        Value v = vector::FromElementsOp::create(b, loc, VectorType::get({4}, acc), vals);
        vector::StoreOp::create(b, loc, v, Bs, ValueRange{kk, j}, /*nontemporal=*/false,
                                llvm::MaybeAlign(4 * acc.getIntOrFloatBitWidth() / 8));
      }
    } else {
      bool nFast = g.B.implicitLoad ? g.B.fastRole == kN : g.B.stride[kN] == 1;
      for (int64_t r = 0; r < BK * BN / T; ++r) {
        Value e = kb.add(tid, r * T);
        Value kk = nFast ? kb.div(e, BN) : kb.rem(e, BK);
        Value j = nFast ? kb.rem(e, BN) : kb.div(e, BK);
        auto vals = g.loadTile(g.B, batch, kK, kb.add(k0, kk), kCheck, kN, kb.add(n0, j), nCheck, 1,
                               true, acc);
        memref::StoreOp::create(b, loc, vals[0], Bs, ValueRange{kk, j});
      }
    }
    gpu::BarrierOp::create(b, loc);
    // Register tile: rows (i/4)*(BM/TM)*4 + tRow*4 + i%4, columns likewise.
    SmallVector<Value> accs(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    auto vt = VectorType::get({4}, acc);
    unsigned vbytes = 4 * acc.getIntOrFloatBitWidth() / 8;
    Value aBase = kb.mul(tRow, 4), bBase = kb.mul(tCol, 4);
    for (int64_t kk = 0; kk < BK; ++kk) {
      SmallVector<Value> a, bv;
      for (int64_t gi = 0; gi < TM / 4; ++gi) {
        Value v = vector::LoadOp::create(b, loc, vt, As,
                                         ValueRange{kb.idx(kk), kb.add(aBase, gi * (BM / TM) * 4)},
                                         false, llvm::MaybeAlign(vbytes));
        for (int64_t x = 0; x < 4; ++x)
          a.push_back(vector::ExtractOp::create(b, loc, v, x));
      }
      for (int64_t gj = 0; gj < TN / 4; ++gj) {
        Value v = vector::LoadOp::create(b, loc, vt, Bs,
                                         ValueRange{kb.idx(kk), kb.add(bBase, gj * (BN / TN) * 4)},
                                         false, llvm::MaybeAlign(vbytes));
        for (int64_t x = 0; x < 4; ++x)
          bv.push_back(vector::ExtractOp::create(b, loc, v, x));
      }
      for (int64_t i = 0; i < TM; ++i)
        for (int64_t j = 0; j < TN; ++j)
          accs[i * TN + j] = math::FmaOp::create(b, loc, a[i], bv[j], accs[i * TN + j]);
    }
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, accs);
  }

  // Epilogue: C += acc, four columns at a time where C's rows are contiguous
  // (atomically, one element at a time, when K is split over blocks).
  // With an epilogue (its sums start from C's initial value, K is not
  // split), each element goes through it instead.
  bool vecC =
      splits == 1 && !epilogue && canVectorize(g.C.stride, kN, p.n, {kB, kM}, {p.batch, p.m});
  auto vt = VectorType::get({4}, acc);
  unsigned vbytes = 4 * acc.getIntOrFloatBitWidth() / 8;
  for (int64_t i = 0; i < TM; ++i) {
    Value row = kb.add(m0, kb.add(kb.mul(tRow, 4), (i / 4) * (BM / TM) * 4 + i % 4));
    for (int64_t gj = 0; gj < TN / 4; ++gj) {
      Value col0 = kb.add(n0, kb.add(kb.mul(tCol, 4), gj * (BN / TN) * 4));
      if (vecC) {
        Value rowOk = mCheck ? kb.lt(row, p.m) : Value();
        Value colOk = nCheck ? kb.lt(col0, p.n) : Value();
        Value valid = kb.andI(rowOk, colOk);
        OpBuilder::InsertionGuard guard(b);
        if (valid) {
          auto ifOp = scf::IfOp::create(b, loc, valid, /*withElse=*/false);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        }
        Value off = g.C.offset(kb, batch, kM, row, kN, col0);
        SmallVector<Value> parts;
        for (int64_t x = 0; x < 4; ++x)
          parts.push_back(loop.getResult(i * TN + gj * 4 + x));
        Value sum = vector::FromElementsOp::create(b, loc, vt, parts);
        if (!start)
          sum = arith::AddFOp::create(
              b, loc,
              vector::LoadOp::create(b, loc, vt, g.C.flat, off, false, llvm::MaybeAlign(vbytes)),
              sum);
        vector::StoreOp::create(b, loc, sum, g.C.flat, off, false, llvm::MaybeAlign(vbytes));
        continue;
      }
      for (int64_t x = 0; x < 4; ++x) {
        Value col = kb.add(col0, x);
        Value rowOk = mCheck ? kb.lt(row, p.m) : Value();
        Value colOk = nCheck ? kb.lt(col, p.n) : Value();
        Value valid = kb.andI(rowOk, colOk);
        OpBuilder::InsertionGuard guard(b);
        if (valid) {
          auto ifOp = scf::IfOp::create(b, loc, valid, /*withElse=*/false);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        }
        Value part = loop.getResult(i * TN + gj * 4 + x);
        if (epilogue) {
          epilogue(row, col, part);
          continue;
        }
        if (g.C.implicitAdd) {
          g.C.implicitAdd(batch, row, col, part,
                          splits > 1 ? gpukernel::CUpdate::AtomicAdd
                          : start    ? gpukernel::CUpdate::Store
                                     : gpukernel::CUpdate::Add);
          continue;
        }
        Value off = g.C.offset(kb, batch, kM, row, kN, col);
        if (splits > 1) {
          memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, part, g.C.flat, off);
          continue;
        }
        Value sum = start ? part
                          : arith::AddFOp::create(
                                b, loc, memref::LoadOp::create(b, loc, g.C.flat, off), part);
        memref::StoreOp::create(b, loc, sum, g.C.flat, off);
      }
    }
  }
}

/// Tensor-core kernel (exact tiles, C rows contiguous); the accumulators
/// start from `start` (C's constant initial value) or from C. With
/// `epilogue`, each warp's results go through `staging` (16 rows of wn f32
/// a warp) to its lanes, which store them through it element by element.
static void buildMma(GemmKernel &g, gpu::LaunchOp launch, Value As, Value Bs, int64_t BK,
                     int64_t kStep, Value start = Value(), Value staging = Value(),
                     function_ref<void(Value, Value, Value)> epilogue = nullptr) {
  OpBuilder &b = g.b;
  Location loc = g.loc;
  KB kb = g.k();
  const GpuGemmSchedule &s = g.s;
  const GemmProblem &p = g.p;
  int64_t T = s.mmaThreads(), BM = s.bm, BN = s.bn, WM = s.wm, WN = s.wn;
  int64_t ldA = BK + 8, ldB = BN + 8;
  Type in = g.A.elem;
  MLIRContext *ctx = b.getContext();
  auto aType = gpu::MMAMatrixType::get({16, kStep}, in, "AOp");
  auto bType = gpu::MMAMatrixType::get({kStep, 16}, in, "BOp");
  auto cType = gpu::MMAMatrixType::get({16, 16}, g.acc, "COp");
  auto ld = [&](int64_t v) { return IntegerAttr::get(IndexType::get(ctx), v); };

  Value tid = launch.getThreadIds().x;
  Value batch = launch.getBlockIds().z;
  Value m0 = kb.mul(launch.getBlockIds().y, BM);
  Value n0 = kb.mul(launch.getBlockIds().x, BN);
  Value warp = kb.div(tid, 32);
  Value wRow = kb.div(warp, BN / WN), wCol = kb.rem(warp, BN / WN);
  Value rowBase = kb.add(m0, kb.mul(wRow, WM)), colBase = kb.add(n0, kb.mul(wCol, WN));
  int64_t TI = WM / 16, TJ = WN / 16;

  SmallVector<Value> init;
  for (int64_t i = 0; i < TI; ++i)
    for (int64_t j = 0; j < TJ; ++j) {
      if (start) {
        init.push_back(gpu::SubgroupMmaConstantMatrixOp::create(b, loc, cType, start));
        continue;
      }
      Value off = g.C.offset(kb, batch, kM, kb.add(rowBase, i * 16), kN, kb.add(colBase, j * 16));
      init.push_back(gpu::SubgroupMmaLoadMatrixOp::create(b, loc, cType, g.C.flat, off,
                                                          ld(g.C.stride[kM]), UnitAttr()));
    }
  bool vecA = canVectorize(g.A.stride, kK, p.k, {kB, kM}, {p.batch, p.m});
  bool vecB = canVectorize(g.B.stride, kN, p.n, {kB, kK}, {p.batch, p.k});
  unsigned vbytes = 4 * in.getIntOrFloatBitWidth() / 8;
  auto vt = VectorType::get({4}, in);

  auto loop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(p.k), kb.idx(BK), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k0 = loop.getInductionVar();
    // A tile -> As[i][kk] (row-major, padded).
    if (vecA && (BM * BK / 4) % T == 0) {
      for (int64_t r = 0; r < BM * BK / 4 / T; ++r) {
        Value e = kb.add(tid, r * T);
        Value i = kb.div(e, BK / 4), kk = kb.mul(kb.rem(e, BK / 4), 4);
        Value off = g.A.offset(kb, batch, kM, kb.add(m0, i), kK, kb.add(k0, kk));
        Value v =
            vector::LoadOp::create(b, loc, vt, g.A.flat, off, false, llvm::MaybeAlign(vbytes));
        vector::StoreOp::create(b, loc, v, As, ValueRange{i, kk}, false, llvm::MaybeAlign(vbytes));
      }
    } else {
      bool kFast = g.A.stride[kK] == 1;
      for (int64_t r = 0; r < BM * BK / T; ++r) {
        Value e = kb.add(tid, r * T);
        Value i = kFast ? kb.div(e, BK) : kb.rem(e, BM);
        Value kk = kFast ? kb.rem(e, BK) : kb.div(e, BM);
        Value off = g.A.offset(kb, batch, kM, kb.add(m0, i), kK, kb.add(k0, kk));
        Value v = memref::LoadOp::create(b, loc, g.A.flat, off);
        memref::StoreOp::create(b, loc, v, As, ValueRange{i, kk});
      }
    }
    // B tile -> Bs[kk][j].
    if (vecB && (BK * BN / 4) % T == 0) {
      for (int64_t r = 0; r < BK * BN / 4 / T; ++r) {
        Value e = kb.add(tid, r * T);
        Value kk = kb.div(e, BN / 4), j = kb.mul(kb.rem(e, BN / 4), 4);
        Value off = g.B.offset(kb, batch, kK, kb.add(k0, kk), kN, kb.add(n0, j));
        Value v =
            vector::LoadOp::create(b, loc, vt, g.B.flat, off, false, llvm::MaybeAlign(vbytes));
        vector::StoreOp::create(b, loc, v, Bs, ValueRange{kk, j}, false, llvm::MaybeAlign(vbytes));
      }
    } else {
      bool nFast = g.B.stride[kN] == 1;
      for (int64_t r = 0; r < BK * BN / T; ++r) {
        Value e = kb.add(tid, r * T);
        Value kk = nFast ? kb.div(e, BN) : kb.rem(e, BK);
        Value j = nFast ? kb.rem(e, BN) : kb.div(e, BK);
        Value off = g.B.offset(kb, batch, kK, kb.add(k0, kk), kN, kb.add(n0, j));
        Value v = memref::LoadOp::create(b, loc, g.B.flat, off);
        memref::StoreOp::create(b, loc, v, Bs, ValueRange{kk, j});
      }
    }
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> accs(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    Value aRow = kb.mul(wRow, WM), bCol = kb.mul(wCol, WN);
    for (int64_t ks = 0; ks < BK / kStep; ++ks) {
      SmallVector<Value> af, bf;
      for (int64_t i = 0; i < TI; ++i)
        af.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, aType, As, ValueRange{kb.add(aRow, i * 16), kb.idx(ks * kStep)}, ld(ldA),
            UnitAttr()));
      for (int64_t j = 0; j < TJ; ++j)
        bf.push_back(gpu::SubgroupMmaLoadMatrixOp::create(
            b, loc, bType, Bs, ValueRange{kb.idx(ks * kStep), kb.add(bCol, j * 16)}, ld(ldB),
            UnitAttr()));
      for (int64_t i = 0; i < TI; ++i)
        for (int64_t j = 0; j < TJ; ++j)
          accs[i * TJ + j] = gpu::SubgroupMmaComputeOp::create(
              b, loc, cType, af[i], bf[j], accs[i * TJ + j], UnitAttr(), UnitAttr());
    }
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, accs);
  }
  if (epilogue) {
    // A fragment stores whole: per row of fragments, the warp's 16 x WN
    // results into its staging rows, then each lane takes 16 WN / 32 of
    // them (consecutive columns across the lanes) through the consumer.
    // Barriers between (the warps run the same loop): the lanes read what
    // other lanes' fragment stores wrote, and the next row reuses the rows.
    Value lane = kb.rem(tid, 32), stagingRow = kb.mul(warp, 16);
    for (int64_t i = 0; i < TI; ++i) {
      for (int64_t j = 0; j < TJ; ++j)
        gpu::SubgroupMmaStoreMatrixOp::create(b, loc, loop.getResult(i * TJ + j), staging,
                                              ValueRange{stagingRow, kb.idx(j * 16)}, ld(WN),
                                              UnitAttr());
      gpu::BarrierOp::create(b, loc);
      for (int64_t r = 0; r < 16 * WN / 32; ++r) {
        Value e = kb.add(lane, r * 32);
        Value row = kb.div(e, WN), col = kb.rem(e, WN);
        Value v = memref::LoadOp::create(b, loc, staging, ValueRange{kb.add(stagingRow, row), col});
        epilogue(kb.add(kb.add(rowBase, i * 16), row), kb.add(colBase, col), v);
      }
      gpu::BarrierOp::create(b, loc);
    }
    return;
  }
  for (int64_t i = 0; i < TI; ++i)
    for (int64_t j = 0; j < TJ; ++j) {
      Value off = g.C.offset(kb, batch, kM, kb.add(rowBase, i * 16), kN, kb.add(colBase, j * 16));
      gpu::SubgroupMmaStoreMatrixOp::create(b, loc, loop.getResult(i * TJ + j), g.C.flat, off,
                                            ld(g.C.stride[kM]), UnitAttr());
    }
}

using OperandMaker = function_ref<void(KB &, Operand &, Operand &, Operand &)>;

std::optional<GpuGemmEpilogue> mlir::neo::findGpuGemmEpilogue(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Value c = op.getDpsInitOperand(0)->get();
  auto cType = dyn_cast<MemRefType>(c.getType());
  if (!cType || !cType.hasStaticShape() ||
      !(cType.getElementType().isF32() || cType.getElementType().isF64()))
    return std::nullopt;
  // C's initial value: a constant fill of all of C before the GEMM, and no
  // other use of C before it (views of C are uses: they end the search). C
  // must be a buffer of its own (an allocation or a function argument, which
  // never overlap), not a view: an access to the viewed buffer between the
  // fill and the GEMM would not be a use of C.
  // The GEMM writes every element of C, so its kernel can start its
  // accumulators from the constant and store them without reading C; the
  // fill's launch and a read of C go away. Uses after the GEMM may be
  // anything.
  if (Operation *def = c.getDefiningOp();
      def ? !isa<memref::AllocOp>(def)
          : !isa<func::FuncOp>(cast<BlockArgument>(c).getOwner()->getParentOp()))
    return std::nullopt;
  Block *block = op->getBlock();
  GpuGemmEpilogue e;
  // The consumer: the first use after the GEMM (a linalg op of the block);
  // any later uses read the values the kernel then stores too.
  linalg::LinalgOp candidate;
  Operation *first = nullptr;
  bool laterUses = false;
  for (Operation *user : c.getUsers()) {
    if (user == op.getOperation())
      continue;
    Operation *top = block->findAncestorOpInBlock(*user);
    if (!top)
      return std::nullopt;
    auto l = dyn_cast<linalg::LinalgOp>(user);
    if (l && isa<linalg::FillOp>(user) && !e.fill && top == user && user->isBeforeInBlock(op) &&
        l.getDpsInitOperand(0)->get() == c &&
        matchPattern(l.getDpsInputOperand(0)->get(), m_Constant())) {
      e.fill = l;
      continue;
    }
    if (!op->isBeforeInBlock(top))
      return std::nullopt;
    if (top == first) // (a user once per operand: twice when in place)
      continue;
    if (first && first->isBeforeInBlock(top)) {
      laterUses = true;
      continue;
    }
    laterUses |= first != nullptr;
    first = top;
    candidate = top == user ? l : linalg::LinalgOp();
  }
  if (!e.fill)
    return std::nullopt;
  GpuGemmEpilogue initOnly = e;
  // An elementwise consumer to apply as the results are stored: the first
  // use after the GEMM, over the f32 C (2-D for a GEMM kernel; an implicit
  // GEMM's C, a convolution's output, of any rank).
  e.consumer = candidate;
  if (!e.consumer || cType.getRank() < 1 || !cType.getLayout().isIdentity() ||
      !cType.getElementType().isF32())
    return initOnly;
  linalg::LinalgOp g = e.consumer;
  // One read of C at the identity map of an all-parallel space of C's
  // shape, one output elsewhere that the body does not read.
  if (g.getNumLoops() != cType.getRank() || g.getNumReductionLoops() != 0 ||
      g.getNumDpsInits() != 1 || !isa<linalg::GenericOp>(g.getOperation()) ||
      g.getStaticLoopRanges() != SmallVector<int64_t>(cType.getShape()))
    return initOnly;
  int reads = 0;
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (!isa<MemRefType>(in->get().getType()))
      return initOnly;
    if (in->get() != c)
      continue;
    if (!g.getMatchingIndexingMap(in).isIdentity())
      return initOnly;
    e.cInput = in->getOperandNumber();
    ++reads;
  }
  // The output: another buffer, or C itself at the identity map (in place,
  // as bufferization writes `y = f(C)` when C is y's buffer).
  OpOperand *out = g.getDpsInitOperand(0);
  // Its map a permutation: each element of C's space writes one element of
  // the output (a map dropping a dim would have blocks race on one).
  if (reads != 1 || !g.getMatchingBlockArgument(out).use_empty() ||
      !isa<MemRefType>(out->get().getType()) || !g.getMatchingIndexingMap(out).isPermutation() ||
      (out->get() == c && !g.getMatchingIndexingMap(out).isIdentity()))
    return initOnly;
  // C's values are stored too when something after the consumer reads them
  // or the caller sees C (an out-param), unless the consumer writes C in
  // place (then only its values are ever seen).
  e.keepC = out->get() != c && (laterUses || !c.getDefiningOp<memref::AllocOp>());
  // The output is written while other blocks still read A and B: it must be
  // neither (nor a view of either), nor anything else the GEMM reads (an
  // implicit GEMM's gathered input, read in its body).
  Value written = baseBuffer(out->get());
  bool readByGemm = false;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      readByGemm |= v != c && isa<BaseMemRefType>(v.getType()) && baseBuffer(v) == written;
  });
  if (readByGemm)
    return initOnly;
  for (Operation &inner : g.getBlock()->without_terminator())
    if (!isPure(&inner) || isa<linalg::IndexOp>(inner))
      return initOnly;
  // The consumer moves up to the GEMM: nothing between them may write what
  // it reads or touch what it writes (an allocation, or the fills, GEMMs
  // and conversions of other buffers that neo-gpu-map's earlier steps may
  // leave there, touch neither), and what it reads must exist there already.
  SmallVector<Value> consumerReads;
  g->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (isa<BaseMemRefType>(v.getType()) && v != out->get())
        consumerReads.push_back(baseBuffer(v));
  });
  Value consumerWrites = baseBuffer(out->get());
  auto independent = [&](Operation *between) {
    if (isPure(between) || isa<memref::AllocOp, memref::AllocaOp>(between))
      return true;
    return !mayTouch(between, consumerWrites) && !mayWrite(between, consumerWrites) &&
           llvm::none_of(consumerReads, [&](Value r) { return mayWrite(between, r); });
  };
  for (Operation *between = op->getNextNode(); between != g.getOperation();
       between = between->getNextNode())
    if (!independent(between))
      return initOnly;
  // (A fresh allocation between them, as bufferization places the
  // consumer's output, moves up with it: hoistEpilogueAllocations.)
  auto definedLater = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != op->getBlock() || def->isBeforeInBlock(op))
      return false;
    return !(isa<memref::AllocOp>(def) && def->getNumOperands() == 0 && def->isBeforeInBlock(g));
  };
  if (llvm::any_of(g->getOperands(), definedLater))
    return initOnly;
  // Values the body captures from above too.
  bool captured = false;
  g->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      captured |= v.getParentRegion() != &g->getRegion(0) && definedLater(v);
  });
  if (captured)
    return initOnly;
  return e;
}

/// Moves the allocations between GEMM `op` and its epilogue's consumer that
/// the consumer uses (its output's buffer) before `op`, where the consumer
/// will run.
static void hoistEpilogueAllocations(linalg::LinalgOp op, const GpuGemmEpilogue &e) {
  e.consumer->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (auto alloc = v.getDefiningOp<memref::AllocOp>())
        if (alloc->getBlock() == op->getBlock() && op->isBeforeInBlock(alloc))
          alloc->moveBefore(op);
  });
}

/// Which parts of epilogue `e` (when there is one) a kernel of GEMM `op`
/// takes over: the fill's constant as its accumulators' start (not when K
/// is split over blocks that add into C, which the fill must then have
/// written), and the consumer as its store (only where the kernel can
/// apply it: `consumerAllowed`). Moves what the consumer needs up to `op`
/// when it is taken.
namespace {
struct EpilogueUse {
  bool init = false, consumer = false;
};
} // namespace
static EpilogueUse useEpilogue(linalg::LinalgOp op, const GpuGemmEpilogue *e, int64_t splits,
                               bool consumerAllowed) {
  EpilogueUse use;
  use.init = e && splits == 1;
  use.consumer = use.init && consumerAllowed && e->consumer;
  if (use.consumer)
    hoistEpilogueAllocations(op, *e);
  return use;
}

/// The constant that the fill of `e` writes.
static Value initialValue(const GpuGemmEpilogue &e) {
  return linalg::LinalgOp(e.fill).getDpsInputOperand(0)->get();
}

/// Erases what a kernel took over from `e` (the fill, and the consumer
/// with `consumer`), saying so in `*fused`.
static void eraseFused(RewriterBase &rewriter, const GpuGemmEpilogue &e, bool consumer,
                       GemmFusion *fused) {
  if (consumer)
    rewriter.eraseOp(e.consumer);
  rewriter.eraseOp(e.fill);
  if (fused) {
    fused->fill = true;
    fused->consumer = consumer;
  }
}

/// The consumer's body at C's element `ivs` (its loops' indices: it reads
/// C at the identity map) with that element's value `value`, stored.
static void emitGemmEpilogue(OpBuilder &b, Location loc, const GpuGemmEpilogue &e, ValueRange ivs,
                             Value value) {
  linalg::LinalgOp g = e.consumer;
  Block *block = g.getBlock();
  auto indices = [&](OpOperand *operand) {
    SmallVector<Value> out;
    for (AffineExpr expr : g.getMatchingIndexingMap(operand).getResults()) {
      auto single = AffineMap::get(ivs.size(), 0, expr);
      out.push_back(affine::AffineApplyOp::create(b, loc, single, ivs));
    }
    return out;
  };
  IRMapping map;
  for (OpOperand *in : g.getDpsInputOperands())
    map.map(block->getArgument(in->getOperandNumber()),
            in->getOperandNumber() == e.cInput
                ? value
                : memref::LoadOp::create(b, loc, in->get(), indices(in)).getResult());
  for (Operation &inner : block->without_terminator())
    b.clone(inner, map);
  OpOperand *out = g.getDpsInitOperand(0);
  memref::StoreOp::create(b, loc, map.lookupOrDefault(block->getTerminator()->getOperand(0)),
                          out->get(), indices(out));
}

/// Replaces `op` by a pipelined tensor-core kernel (grid (n / bn, m / bm,
/// batch), `threads` threads, `sharedBytes` of dynamic shared memory) that
/// `build` fills from A, B, C, the initial value and the epilogue store
/// (without split K, at any batch), erasing what it took over and saying so
/// in `*fused`. The store takes C's element (row, col) of the problem in
/// the block's batch (grid z); `cIndices` gives its indices in C.
using PipelinedBody = function_ref<void(gpu::LaunchOp, const GemmKernel &, Value init,
                                        function_ref<void(Value, Value, Value)> store)>;
using CIndicesFn = function_ref<SmallVector<Value>(Value batch, Value row, Value col)>;

/// A GEMM kernel's store of C's element (row, col) of batch `batch` with
/// value `value` through epilogue `e`: C's value too where it is kept, then
/// the consumer's at C's indices (`cIndices`).
static void storeThroughEpilogue(GemmKernel &g, const GpuGemmEpilogue &e, CIndicesFn cIndices,
                                 Value batch, Value row, Value col, Value value) {
  KB kb = g.k();
  if (e.keepC) {
    // C's value too, where later ops (a training step's backward) read it.
    if (g.C.implicitAdd)
      g.C.implicitAdd(batch, row, col, value, CUpdate::Store);
    else
      memref::StoreOp::create(g.b, g.loc, value, g.C.flat, g.C.offset(kb, batch, kM, row, kN, col));
  }
  emitGemmEpilogue(g.b, g.loc, e, cIndices(batch, row, col), value);
}

static void launchPipelined(RewriterBase &rewriter, linalg::LinalgOp op, const GemmProblem &p,
                            Type acc, const GpuGemmSchedule &t, int64_t threads,
                            int64_t sharedBytes, StringRef name, PipelinedBody build,
                            OperandMaker makeOperands, const GpuGemmEpilogue *epilogue,
                            GemmFusion *fused, int64_t splits, CIndicesFn cIndices) {
  OpBuilder::InsertionGuard guard(rewriter);
  auto [withInit, withEpilogue] = useEpilogue(op, epilogue, splits, /*consumerAllowed=*/true);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  gpu::LaunchOp launch = createLaunch(
      rewriter, loc, {(p.n + t.bn - 1) / t.bn, (p.m + t.bm - 1) / t.bm, p.batch * splits},
      {threads}, {}, sharedBytes);
  KB kb{rewriter, loc};
  GemmKernel g{rewriter, loc, p, t, Operand(), Operand(), Operand(), acc};
  makeOperands(kb, g.A, g.B, g.C);
  Value init = withInit ? initialValue(*epilogue) : Value();
  // Without split K, grid z is the batch.
  Value batch = launch.getBlockIds().z;
  auto store = [&](Value row, Value col, Value value) {
    storeThroughEpilogue(g, *epilogue, cIndices, batch, row, col, value);
  };
  build(launch, g, init, withEpilogue ? function_ref<void(Value, Value, Value)>(store) : nullptr);
  launch->setAttr("neo.kernel",
                  rewriter.getStringAttr(withEpilogue ? (name + "_epilogue").str() : name.str()));
  rewriter.eraseOp(op);
  if (withInit)
    eraseFused(rewriter, *epilogue, withEpilogue, fused);
}

/// What the tensor-core kernel of an implicit GEMM needs to know: which
/// operand roles are contiguous, and the 16-bit type both operands hold
/// exactly (null when they do not).
struct ImplicitOperands {
  bool aKFast = false, bKFast = false;
  Type narrow;
  /// Ops in the generic's body: the index arithmetic of each gathered value.
  int64_t bodyOps = 0;
  /// The memrefs A and B are plain reads of (ImplicitGemm::readMemrefA), or null.
  Value readA, readB;
};

/// Whether `mem` (an operand's plain read) can be copied by cp.async into
/// tiles of MMA input type `in`.
static bool copyableRead(Value mem, Type in) {
  return mem && in && isFlatViewable(mem.getType()) &&
         cast<MemRefType>(mem.getType()).getElementType() == in;
}

/// The implicit GEMM `ig` of `op` as the tensor-core kernels see it.
static ImplicitOperands implicitOperandsOf(linalg::LinalgOp op, const ImplicitGemm &ig) {
  ImplicitOperands operands;
  operands.aKFast = ig.aKRun, operands.bKFast = ig.bKRun;
  operands.bodyOps = static_cast<int64_t>(op->getRegion(0).front().getOperations().size());
  operands.readA = ig.readMemrefA(), operands.readB = ig.readMemrefB();
  Type narrowA = narrowSourceType(ig.a), narrowB = narrowSourceType(ig.b);
  if (narrowA && narrowA == narrowB)
    operands.narrow = narrowA;
  return operands;
}

/// The MMA input type of the implicit warpgroup kernel: the operands' type
/// when both are plain reads of copyable memrefs of one f16, bf16 or f32
/// (tf32) type; else null.
static Type wgmmaGatherType(const ImplicitOperands &operands) {
  if (!operands.readA || !operands.readB)
    return Type();
  Type in = cast<MemRefType>(operands.readA.getType()).getElementType();
  if (!(in.isF16() || in.isBF16() || in.isF32()) || !copyableRead(operands.readA, in) ||
      !copyableRead(operands.readB, in))
    return Type();
  return in;
}

/// Why the grid of a GEMM kernel with `bm` x `bn` tiles (x: column tiles,
/// y: row tiles, z: the batch times the K splits) passes CUDA's limits, or
/// "".
static std::string gemmGridError(const GemmProblem &p, int64_t bm, int64_t bn, int64_t splits = 1) {
  return gpukernel::gridLimitError((p.n + bn - 1) / bn, (p.m + bm - 1) / bm, p.batch * splits);
}

/// K split over blocks (added atomically) when the grid of `bm` x `bn`
/// tiles has fewer than `minBlocks` blocks (a weight gradient: a small
/// output summing over batch and pixels): `splits` chunks of `kChunk` (a
/// multiple of `bk`).
static void splitK(const GemmProblem &p, int64_t bm, int64_t bn, int64_t bk, int64_t minBlocks,
                   int64_t &splits, int64_t &kChunk) {
  splits = 1, kChunk = p.k;
  int64_t blocks = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn) * p.batch;
  if (minBlocks <= 0 || blocks >= minBlocks)
    return;
  splits = std::min((minBlocks + blocks - 1) / blocks, std::max<int64_t>(1, p.k / 256));
  kChunk = ((p.k + splits - 1) / splits + bk - 1) / bk * bk;
  splits = (p.k + kChunk - 1) / kChunk;
  if (!gemmGridError(p, bm, bn, splits).empty())
    splits = 1, kChunk = p.k;
}

/// An implicit GEMM kernel's write of C[batch, m, n]: through the epilogue's
/// `store` when there is one (the kernel then stores every element once:
/// its sums start from C's initial value and K is not split), else as
/// `how` says.
static void storeOrAdd(const GemmKernel &g, function_ref<void(Value, Value, Value)> store,
                       Value batch, Value m, Value n, Value value, CUpdate how) {
  if (store) {
    assert(how == CUpdate::Store && "an epilogue needs the kernel to store C");
    store(m, n, value);
    return;
  }
  g.C.implicitAdd(batch, m, n, value, how);
}

/// Chooses the kernel (tensor cores or SIMT, tiles, split K) for `p` and
/// replaces `op` by its launch; `makeOperands` builds A, B and C inside it.
static FailureOr<bool> emitGemm(RewriterBase &rewriter, linalg::LinalgOp op, const GemmProblem &p,
                                Type in, Type acc, bool cRowsContiguous,
                                const GpuGemmSchedule &schedule, OperandMaker makeOperands,
                                bool implicit, const GpuTarget &target,
                                const GpuGemmEpilogue *epilogue, GemmFusion *fused,
                                const ImplicitOperands *implicitOperands, CIndicesFn cIndices) {
  if (!(acc.isF32() || acc.isF64()))
    return false;
  {
    // The fields' own ranges first: the tile arithmetic below divides by them.
    schedules::GpuGemmParams params;
    std::string error = schedule.toParams(params);
    if (error.empty())
      error = schedules::checkGpuGemm(params, schedules::GpuGemmKernel::Any);
    if (!error.empty())
      return op->emitOpError("invalid gpu_gemm schedule: ") << error, FailureOr<bool>(failure());
  }
  // Past CUDA's grid limits with the smallest row tiles (64 rows), with
  // all: the generic kernel runs it.
  if (!gemmGridError(p, 64, p.n).empty())
    return false;

  // Tensor cores: tf32 on request, f16/bf16 products by default; exact tiles
  // only. The pipelined mma.sync kernel first (planMmaSync says whether it
  // applies), then (f16, tf32) WMMA.
  GpuGemmSchedule s = schedule;
  // Warpgroup MMA (sm_90a) where the schedule asks for it: for contractions
  // that it cannot run, a diagnostic (neo-gpu-select-schedules only chooses
  // it where it applies).
  if (!implicit && s.mma == "wgmma") {
    WgmmaPlan plan;
    std::string why = planWgmma(p, in, acc, p.strides[0], p.strides[1], p.strides[2], s, plan);
    if (why.empty())
      why = gemmGridError(p, s.bm, s.bn);
    if (!why.empty())
      return op->emitOpError("gpu_gemm schedule with mma = \"wgmma\": ") << why,
             FailureOr<bool>(failure());
    auto build = [&](gpu::LaunchOp launch, const GemmKernel &g, Value init,
                     function_ref<void(Value, Value, Value)> store) {
      buildWgmma(rewriter, op.getLoc(), launch, plan, p, in, g.buffers(), init, store);
    };
    launchPipelined(rewriter, op, p, acc, s, plan.threads, plan.sharedBytes, "gemm_wgmma", build,
                    makeOperands, epilogue, fused, /*splits=*/1, cIndices);
    return true;
  }
  if (!implicit) {
    GpuGemmSchedule t = s;
    if (t.bk < 16)
      t.bk = 32;
    MmaSyncPlan plan;
    std::string why = planMmaSync(p, in, acc, p.strides[0], p.strides[1], p.strides[2], t, plan);
    if (why.empty() && gemmGridError(p, t.bm, t.bn).empty()) {
      auto build = [&](gpu::LaunchOp launch, const GemmKernel &g, Value init,
                       function_ref<void(Value, Value, Value)> store) {
        buildMmaSync(rewriter, op.getLoc(), launch, plan, p, in, g.buffers(), init, store);
      };
      launchPipelined(rewriter, op, p, acc, t, plan.threads, plan.sharedBytes, "gemm_mma_sync",
                      build, makeOperands, epilogue, fused, /*splits=*/1, cIndices);
      return true;
    }
    if (t.stages >= 2 && plan.sharedBytes > kMaxDynamicShared)
      return op->emitOpError("invalid gpu_gemm schedule: ") << why, FailureOr<bool>(failure());
  }
  // Implicit GEMMs on warpgroup MMA (sm_90a: neo-gpu-select-schedules
  // chooses it where it applies): both operands copied by cp.async.
  if (implicit && s.mma == "wgmma") {
    WgmmaPlan plan;
    int64_t splits = 1, kChunk = p.k;
    // f16/bf16 operands, or f32 ones as tf32 (wgmma has no f32 products).
    Type mmaIn = implicitOperands ? wgmmaGatherType(*implicitOperands) : Type();
    std::string why =
        "its operands are not both plain reads of f16, bf16 or f32 memrefs of one type";
    if (acc.isF32() && mmaIn) {
      why = planWgmmaGather(mmaIn, implicitOperands->aKFast, implicitOperands->bKFast, s, plan);
      if (why.empty())
        why = gemmGridError(p, s.bm, s.bn);
      // K split only when some SM of the target would have no block: the
      // atomics and the fill they need cost more than the partial wave they
      // fill (a block's stages take 100 KB: two per SM).
      splitK(p, s.bm, s.bn, wgmmaGatherBk(mmaIn), std::min(s.minBlocks, target.smCount), splits,
             kChunk);
    }
    if (!why.empty())
      return op->emitOpError("gpu_gemm schedule with mma = \"wgmma\": ") << why,
             FailureOr<bool>(failure());
    auto build = [&](gpu::LaunchOp launch, const GemmKernel &g, Value init,
                     function_ref<void(Value, Value, Value)> store) {
      auto addC = [&](Value batch, Value m, Value n, Value value, CUpdate how) {
        storeOrAdd(g, store, batch, m, n, value, how);
      };
      buildWgmmaGather(rewriter, op.getLoc(), launch, plan, p, mmaIn, g.A.implicitRead,
                       g.B.implicitRead, addC, splits, kChunk, init);
    };
    launchPipelined(rewriter, op, p, acc, s, plan.threads, plan.sharedBytes, "gemm_implicit_wgmma",
                    build, makeOperands, epilogue, fused, splits, cIndices);
    return true;
  }
  // Implicit GEMMs on tensor cores: operands widened from 16 bits (exact),
  // or f32 as tf32 on request; the loaders gather them into shared memory.
  if (implicitOperands && acc.isF32() && s.stages != 1 && s.mma != "none") {
    Type mmaIn = implicitOperands->narrow ? implicitOperands->narrow
                 : s.mma == "tf32"        ? acc
                                          : Type();
    // bk = 16: the gathered values (and their index arithmetic, which
    // ptxas keeps in registers) grow with bk.
    GpuGemmSchedule t = s;
    if (t.bk < 16)
      t.bk = 16;
    // The default schedule adapts to few columns and rows (a convolution's
    // output channels; a weight gradient's): narrower block tiles, then
    // shorter warp tiles so that a block keeps 4 warps. Then it gathers fewer
    // values per thread the more index arithmetic each takes (ptxas keeps
    // much of it in registers: a padded 3x3 convolution's ~25-op body at 20
    // values per thread takes 181 registers, its strided input gradient's
    // ~100 ops at 20 spill): shallower tiles, then fewer rows.
    if (s.minBlocks > 0) {
      while (t.bn > 16 && t.bn / 2 >= p.n)
        t.bn /= 2, t.wn = std::min(t.wn, t.bn);
      while (t.bm > 16 && t.bm / 2 >= p.m)
        t.bm /= 2, t.wm = std::min(t.wm, t.bm);
      while ((t.bm / t.wm) * (t.bn / t.wn) < 4 && t.wm > 16)
        t.wm /= 2;
      int64_t budget = std::clamp<int64_t>(512 / std::max<int64_t>(implicitOperands->bodyOps, 1), 4,
                                           kMaxGatherRegisters);
      int64_t minBk = implicitOperands->narrow ? 16 : 8;
      auto threads = [&] { return (t.bm / t.wm) * (t.bn / t.wn) * 32; };
      while ((t.bm + t.bn) * t.bk / threads() > budget) {
        // Fewer rows with as many warps (halving the warp tile too): the
        // values per thread halve; at 16-row warp tiles it would not help.
        if (t.bk > minBk)
          t.bk /= 2;
        else if (t.wm > 16)
          t.bm /= 2, t.wm /= 2;
        else
          break;
      }
    }
    // Too few blocks for the GPU (a weight gradient: a small output summing
    // over batch and pixels): K split over blocks, added atomically.
    int64_t splits = 1, kChunk = p.k;
    splitK(p, t.bm, t.bn, t.bk, s.minBlocks, splits, kChunk);
    // Plain reads of memrefs that hold the MMA input type travel by cp.async.
    MmaSyncPlan plan;
    if (mmaIn &&
        planMmaSyncGather(mmaIn, implicitOperands->aKFast, implicitOperands->bKFast,
                          copyableRead(implicitOperands->readA, mmaIn),
                          copyableRead(implicitOperands->readB, mmaIn), t, plan)
            .empty() &&
        gemmGridError(p, t.bm, t.bn, splits).empty()) {
      auto build = [&](gpu::LaunchOp launch, const GemmKernel &g, Value init,
                       function_ref<void(Value, Value, Value)> store) {
        auto addC = [&](Value batch, Value m, Value n, Value value, CUpdate how) {
          storeOrAdd(g, store, batch, m, n, value, how);
        };
        buildMmaSyncGather(rewriter, op.getLoc(), launch, plan, p, mmaIn, g.A.implicitLoad,
                           g.B.implicitLoad, g.A.implicitRead, g.B.implicitRead, addC, splits,
                           kChunk, init);
      };
      launchPipelined(rewriter, op, p, acc, t, plan.threads, plan.sharedBytes, "gemm_implicit_mma",
                      build, makeOperands, epilogue, fused, splits, cIndices);
      return true;
    }
  }
  bool tensorCores = !implicit && acc.isF32() &&
                     ((s.mma == "tf32" && in.isF32()) || (s.mma != "none" && in.isF16()));
  int64_t kStep = in.isF16() ? 16 : 8;
  if (tensorCores) {
    if (s.bk < 16)
      s.bk = 32;
    std::string error;
    if (!s.isValid(/*tensorCores=*/true, error))
      return op->emitOpError("invalid gpu_gemm schedule: ") << error, FailureOr<bool>(failure());
    tensorCores = p.m % s.bm == 0 && p.n % s.bn == 0 && p.k % s.bk == 0 && cRowsContiguous &&
                  p.strides[2][kM] % 4 == 0;
    if (!tensorCores)
      s.bk = schedule.bk < 16 ? schedule.bk : 8;
  }
  // Small problems: smaller tiles, then K split over blocks, until the grid
  // has `minBlocks` blocks (default schedules only).
  int64_t splits = 1, kChunk = p.k;
  auto blocksOf = [&](const GpuGemmSchedule &t) {
    return ((p.m + t.bm - 1) / t.bm) * ((p.n + t.bn - 1) / t.bn) * p.batch;
  };
  if (!tensorCores && s.minBlocks > 0) {
    static const int64_t candidates[][5] = {
        {128, 128, 8, 8, 8}, {128, 64, 8, 8, 4}, {64, 64, 8, 4, 4}, {64, 32, 8, 4, 4}};
    for (const auto &c : candidates) {
      s.bm = c[0], s.bn = c[1], s.bk = c[2], s.tm = c[3], s.tn = c[4];
      if (blocksOf(s) >= s.minBlocks)
        break;
    }
    splitK(p, s.bm, s.bn, s.bk, acc.isF32() ? s.minBlocks : 0, splits, kChunk);
  }
  if (!gemmGridError(p, s.bm, s.bn, splits).empty())
    splits = 1, kChunk = p.k;
  if (!gemmGridError(p, s.bm, s.bn).empty())
    return false;
  if (!tensorCores) {
    std::string error;
    if (!s.isValid(/*tensorCores=*/false, error))
      return op->emitOpError("invalid gpu_gemm schedule: ") << error, FailureOr<bool>(failure());
  }
  int64_t elemBytes = (tensorCores ? in : acc).getIntOrFloatBitWidth() / 8;
  int64_t sharedBytes = tensorCores ? (s.bm * (s.bk + 8) + s.bk * (s.bn + 8)) * elemBytes
                                    : (s.bk * (s.bm + 4) + s.bk * s.bn) * elemBytes;
  if (sharedBytes > 48 * 1024)
    return op->emitOpError("invalid gpu gemm schedule: its tiles need ")
               << sharedBytes << " bytes of shared memory, more than the 49152 a kernel holds "
               << "statically",
           FailureOr<bool>(failure());
  OpBuilder::InsertionGuard guard(rewriter);
  // The WMMA kernel stores whole fragments: it applies a consumer through
  // 16 rows of wn f32 a warp in shared memory, where they fit.
  int64_t warps = s.mmaThreads() / 32;
  int64_t stagingBytes = tensorCores ? warps * 16 * s.wn * 4 : 0;
  auto [withInit, withEpilogue] = useEpilogue(
      op, epilogue, splits, /*consumerAllowed=*/sharedBytes + stagingBytes <= 48 * 1024);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  int64_t threads = tensorCores ? s.mmaThreads() : s.simtThreads();
  Type sharedElem = tensorCores ? in : acc;
  SmallVector<Type> shared = {tensorCores ? sharedType({s.bm, s.bk + 8}, sharedElem)
                                          : sharedType({s.bk, s.bm + 4}, sharedElem),
                              tensorCores ? sharedType({s.bk, s.bn + 8}, sharedElem)
                                          : sharedType({s.bk, s.bn}, sharedElem)};
  if (tensorCores && withEpilogue)
    shared.push_back(sharedType({warps * 16, s.wn}, acc));
  gpu::LaunchOp launch = createLaunch(
      rewriter, loc, {(p.n + s.bn - 1) / s.bn, (p.m + s.bm - 1) / s.bm, p.batch * splits},
      {threads}, shared);
  KB kb{rewriter, loc};
  GemmKernel g{rewriter, loc, p, s, Operand(), Operand(), Operand(), acc};
  makeOperands(kb, g.A, g.B, g.C);
  Value As = launch.getWorkgroupAttributions()[0], Bs = launch.getWorkgroupAttributions()[1];
  Value start = withInit ? initialValue(*epilogue) : Value();
  Value batch = launch.getBlockIds().z;
  auto store = [&](Value row, Value col, Value value) {
    storeThroughEpilogue(g, *epilogue, cIndices, batch, row, col, value);
  };
  if (tensorCores)
    buildMma(g, launch, As, Bs, s.bk, kStep, start,
             withEpilogue ? Value(launch.getWorkgroupAttributions()[2]) : Value(),
             withEpilogue ? function_ref<void(Value, Value, Value)>(store) : nullptr);
  else
    buildSimt(g, launch, As, Bs, splits, kChunk, start,
              withEpilogue ? function_ref<void(Value, Value, Value)>(store) : nullptr);
  std::string name = tensorCores ? "gemm_mma" : implicit ? "gemm_implicit" : "gemm_simt";
  launch->setAttr("neo.kernel", rewriter.getStringAttr(withEpilogue ? name + "_epilogue" : name));
  rewriter.eraseOp(op);
  if (withInit)
    eraseFused(rewriter, *epilogue, withEpilogue, fused);
  return true;
}

/// A contraction's GEMM problem and flat-viewable operands.
struct GemmOperands {
  GemmProblem p;
  Value a, b, c;
  Type in, acc;
};
static std::optional<GemmOperands> gemmOperands(linalg::LinalgOp op) {
  FailureOr<GemmProblem> problem = analyzeGemm(op);
  if (failed(problem))
    return std::nullopt;
  GemmOperands o{*problem,
                 op.getDpsInputOperand(problem->aInput)->get(),
                 op.getDpsInputOperand(1 - problem->aInput)->get(),
                 op.getDpsInitOperand(0)->get(),
                 Type(),
                 Type()};
  if (!isFlatViewable(o.a.getType()) || !isFlatViewable(o.b.getType()) ||
      !isFlatViewable(o.c.getType()))
    return std::nullopt;
  o.in = cast<MemRefType>(o.a.getType()).getElementType();
  o.acc = cast<MemRefType>(o.c.getType()).getElementType();
  return o;
}

/// Whether contraction `o` under `schedule` runs as an implicit GEMM: f32
/// with wgmma asked for by name is tf32, on the GEMM kernel when its tiles
/// fit and the operands lie along k or m (n) with 16-byte aligned rows (a
/// K-major operand copied as it lies, an MN-major one transposed by the
/// threads), else on the implicit warpgroup kernel (which copies float by
/// float).
/// Where a schedule adapts to the GPU (`minBlocks`), also when its tiles
/// leave SMs of `target` without a block on a K of 512 or more: the
/// implicit kernel splits K over blocks, the GEMM kernel does not.
static bool tf32WantsKSplit(const GemmProblem &p, int64_t bm, int64_t bn, int64_t minBlocks,
                            const GpuTarget &target) {
  // The implicit kernel's own rule (emitGemm: min_blocks capped at the SMs).
  int64_t splits = 1, kChunk = p.k;
  splitK(p, bm, bn, /*bk=*/32, std::min(minBlocks, target.smCount), splits, kChunk);
  return splits > 1;
}
static bool runsAsImplicitTf32(const GemmOperands &o, const GpuGemmSchedule &schedule,
                               const GpuTarget &target) {
  if (!o.in.isF32() || schedule.mma != "wgmma")
    return false;
  WgmmaPlan plan;
  const GemmProblem &p = o.p;
  return !planWgmma(p, o.in, o.acc, p.strides[0], p.strides[1], p.strides[2], schedule, plan)
              .empty() ||
         tf32WantsKSplit(p, schedule.bm, schedule.bn, schedule.minBlocks, target);
}

FailureOr<bool> mlir::neo::generateGpuGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                                           const GpuGemmSchedule &schedule,
                                           const GpuGemmEpilogue *epilogue, GemmFusion *fused,
                                           const GpuTarget &target) {
  std::optional<GemmOperands> operands = gemmOperands(op);
  if (!operands)
    return false;
  const GemmProblem &p = operands->p;
  Value a = operands->a, bMem = operands->b, c = operands->c;
  Type in = operands->in, acc = operands->acc;
  // tf32 on warpgroup MMA: an f32 contraction with mma "wgmma" that the
  // GEMM kernel cannot run (tiles, alignment) or that wants K split runs as
  // an implicit GEMM, whose copies place each float K-major in shared
  // memory whatever the operands' layouts.
  if (runsAsImplicitTf32(*operands, schedule, target) && analyzeImplicitGemm(op))
    return false;
  auto make = [&](KB &kb, Operand &A, Operand &B, Operand &C) {
    auto fill = [&](Operand &o, Value mem, int which) {
      o.flat = kb.flat(mem);
      o.elem = cast<MemRefType>(mem.getType()).getElementType();
      for (int r = 0; r < 4; ++r)
        o.stride[r] = p.strides[which][r];
    };
    fill(A, a, 0);
    fill(B, bMem, 1);
    fill(C, c, 2);
  };
  // C's initial value replaces the fill, and the consumer is applied as the
  // kernel stores C, only if the GEMM writes all of C.
  auto cType = cast<MemRefType>(c.getType());
  if (epilogue && p.batch * p.m * p.n != cType.getNumElements())
    epilogue = nullptr;
  // The consumer reads C at the identity map: C's indices of element (row,
  // col) of a batch. C has the identity layout (findGpuGemmEpilogue), so
  // its element's offset is its linear index: (row, col) in a row-major 2-D
  // C, else that offset delinearized over C's shape (a batch of GEMMs,
  // several batch dims, C transposed).
  bool rowMajor = cType.getRank() == 2 && p.strides[2][kM] == p.n && p.strides[2][kN] == 1;
  assert((!rowMajor || p.batch == 1) && "a 2-D C holds no batch dim");
  auto cIndices = [&](Value batch, Value row, Value col) -> SmallVector<Value> {
    if (rowMajor)
      return {row, col};
    KB kb{rewriter, op.getLoc()};
    Value linear = kb.add(kb.add(kb.mul(batch, p.strides[2][kB]), kb.mul(row, p.strides[2][kM])),
                          kb.mul(col, p.strides[2][kN]));
    return kb.delinearize(linear, cType.getShape());
  };
  return emitGemm(rewriter, op, p, in, acc, p.strides[2][kN] == 1, schedule, make,
                  /*implicit=*/false, target, epilogue, fused, nullptr, cIndices);
}

/// chooseWgmmaSchedule for implicit GEMMs: both operands plain reads of
/// one f16/bf16 type, or of f32 where tf32 was asked for; K may be split
/// later (minBlocks is kept).
static std::optional<GpuGemmSchedule> chooseImplicitWgmmaSchedule(linalg::LinalgOp op,
                                                                  const GpuGemmSchedule &base,
                                                                  bool keepTiles,
                                                                  const GpuTarget &target) {
  std::optional<ImplicitGemm> ig = analyzeImplicitGemm(op);
  if (!ig || !cast<MemRefType>(op.getDpsInitOperand(0)->get().getType()).getElementType().isF32())
    return std::nullopt;
  ImplicitOperands operands = implicitOperandsOf(op, *ig);
  // f32 operands only where tf32 was asked for (mma "tf32" or "wgmma").
  Type in = wgmmaGatherType(operands);
  if (!in || (in.isF32() && base.mma != "tf32" && base.mma != "wgmma"))
    return std::nullopt;
  const GemmProblem &p = ig->problem;
  GpuGemmSchedule s = base;
  s.mma = "wgmma";
  auto fits = [&](const GpuGemmSchedule &t) {
    WgmmaPlan plan;
    return planWgmmaGather(in, operands.aKFast, operands.bKFast, t, plan).empty() &&
           gemmGridError(p, t.bm, t.bn).empty();
  };
  if (keepTiles)
    return fits(s) ? std::optional<GpuGemmSchedule>(s) : std::nullopt;
  // The widest tile that the columns fill (a convolution's channels: 64 or
  // fewer take 64 columns) and that gives every SM of the target a block, else the applicable one
  // with the most blocks (K is split after). All copy 16 or 24 pairs per thread
  // (kMaxWgmmaGatherPairs).
  static const int64_t tiles[][2] = {{128, 128}, {64, 128}, {128, 64}};
  std::optional<GpuGemmSchedule> best;
  int64_t bestBlocks = 0;
  for (const auto &t : tiles) {
    if (t[1] > 64 && p.n <= 64)
      continue;
    s.bm = t[0], s.bn = t[1], s.wn = 64, s.bk = wgmmaGatherBk(in), s.wm = 64;
    if (!fits(s))
      continue;
    int64_t blocks = ((p.m + s.bm - 1) / s.bm) * ((p.n + s.bn - 1) / s.bn) * p.batch;
    if (blocks > bestBlocks)
      best = s, bestBlocks = blocks;
    if (blocks >= target.smCount)
      break;
  }
  return best;
}

std::optional<GpuGemmSchedule> mlir::neo::chooseWgmmaSchedule(linalg::LinalgOp op,
                                                              const GpuGemmSchedule &base,
                                                              bool keepTiles,
                                                              const GpuTarget &target) {
  std::optional<GemmOperands> operands = gemmOperands(op);
  // Implicit GEMMs first.
  if (!operands)
    return chooseImplicitWgmmaSchedule(op, base, keepTiles, target);
  const GemmProblem &p = operands->p;
  Type in = operands->in, acc = operands->acc;
  if (in != cast<MemRefType>(operands->b.getType()).getElementType())
    return std::nullopt;
  // f32 contractions only where wgmma was asked for by name (tf32): on this
  // kernel when a tile fits (an MN-major operand transposed by its
  // threads), else as implicit GEMMs (see generateGpuGemm). (tensor-cores=tf32 keeps them on
  // mma.sync.)
  const bool tf32 = in.isF32();
  if (tf32 && base.mma != "wgmma")
    return std::nullopt;
  GpuGemmSchedule s = base;
  s.mma = "wgmma";
  s.minBlocks = 0;
  auto fits = [&](const GpuGemmSchedule &t) {
    WgmmaPlan plan;
    return planWgmma(p, in, acc, p.strides[0], p.strides[1], p.strides[2], t, plan).empty() &&
           gemmGridError(p, t.bm, t.bn).empty();
  };
  if (keepTiles) {
    if (fits(s))
      return s;
    return tf32 ? chooseImplicitWgmmaSchedule(op, base, keepTiles, target) : std::nullopt;
  }
  // The largest tile (128 x 256: 128 accumulators per thread, as cuBLAS's
  // Hopper kernels) that still gives every SM of the target a block;
  // else the applicable tile with the most blocks.
  static const int64_t tiles[][3] = {
      {128, 256, 256}, {128, 128, 128}, {64, 128, 128}, {64, 64, 64}};
  std::optional<GpuGemmSchedule> best;
  for (const auto &t : tiles) {
    s.bm = t[0], s.bn = t[1], s.wn = t[2], s.bk = wgmmaBk(in), s.wm = 64;
    if (!fits(s))
      continue;
    best = s;
    if ((p.m / s.bm) * (p.n / s.bn) * p.batch >= target.smCount)
      break;
  }
  // tf32: the implicit kernel also where this one would leave SMs without
  // a block and K is long enough to split (this kernel does not split K).
  if (tf32 && (!best || tf32WantsKSplit(p, best->bm, best->bn, base.minBlocks, target)))
    return chooseImplicitWgmmaSchedule(op, base, keepTiles, target);
  return best;
}

bool mlir::neo::isGpuGemmCandidate(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return false;
  auto out = dyn_cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!out || !(out.getElementType().isF32() || out.getElementType().isF64()))
    return false;
  if (FailureOr<GemmProblem> p = analyzeGemm(op); succeeded(p)) {
    Value a = op.getDpsInputOperand(p->aInput)->get();
    Value b = op.getDpsInputOperand(1 - p->aInput)->get();
    if (isFlatViewable(a.getType()) && isFlatViewable(b.getType()) && isFlatViewable(out))
      return true;
  }
  return analyzeImplicitGemm(op).has_value();
}

//===----------------------------------------------------------------------===//
// Implicit GEMM: bilinear generics such as convolutions
//===----------------------------------------------------------------------===//

FailureOr<bool> mlir::neo::generateGpuImplicitGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                                                   const GpuGemmSchedule &schedule,
                                                   const GpuGemmEpilogue *epilogue,
                                                   GemmFusion *fused, const GpuTarget &target) {
  std::optional<ImplicitGemm> analysis = analyzeImplicitGemm(op);
  if (!analysis)
    return false;
  const ImplicitGemm &ig = *analysis;
  Type acc = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType()).getElementType();
  int fastA = ig.aKRun ? kK : kM, fastB = ig.bKRun ? kK : kN;
  Value cMem = op.getDpsInitOperand(0)->get();
  auto make = [&](KB &kbRef, Operand &A, Operand &B, Operand &C) {
    KB kb = kbRef;
    Location loc = kb.loc;
    for (Operand *o : {&A, &B, &C}) {
      for (int r = 0; r < 4; ++r)
        o->stride[r] = 0;
      o->elem = acc;
    }
    A.fastRole = fastA;
    B.fastRole = fastB;
    A.implicitLoad = [&, kb, loc](Value batch, Value m, Value k) {
      return ig.loadA(kb.b, loc, batch, m, k);
    };
    B.implicitLoad = [&, kb, loc](Value batch, Value k, Value n) {
      return ig.loadB(kb.b, loc, batch, k, n);
    };
    A.implicitRead = [&, kb, loc](Value batch, Value m, Value k) {
      return ig.readA(kb.b, loc, batch, m, k);
    };
    B.implicitRead = [&, kb, loc](Value batch, Value k, Value n) {
      return ig.readB(kb.b, loc, batch, k, n);
    };
    C.implicitAdd = [&, kb, loc](Value batch, Value m, Value n, Value value,
                                 gpukernel::CUpdate how) {
      OpBuilder &b = kb.b;
      SmallVector<Value> indices = ig.outIndices(b, loc, batch, m, n);
      if (how == gpukernel::CUpdate::AtomicAdd) {
        memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, value, cMem, indices);
        return;
      }
      if (how == gpukernel::CUpdate::Store) {
        memref::StoreOp::create(b, loc, value, cMem, indices);
        return;
      }
      Value old = memref::LoadOp::create(b, loc, cMem, indices);
      memref::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, old, value), cMem, indices);
    };
  };
  ImplicitOperands operands = implicitOperandsOf(op, ig);
  // C's initial value replaces the fill, and the consumer (of C's indices:
  // a convolution's bias and activation) is applied as the tensor-core
  // kernels store C, only if the kernel writes all of C (each point of the
  // problem is one element of C).
  if (epilogue && ig.problem.batch * ig.problem.m * ig.problem.n !=
                      cast<MemRefType>(cMem.getType()).getNumElements())
    epilogue = nullptr;
  auto cIndices = [&](Value batch, Value m, Value n) {
    return ig.outIndices(rewriter, op.getLoc(), batch, m, n);
  };
  return emitGemm(rewriter, op, ig.problem, acc, acc, /*cRowsContiguous=*/false, schedule, make,
                  /*implicit=*/true, target, epilogue, fused, &operands, cIndices);
}
