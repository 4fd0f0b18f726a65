//===- GpuScoreTiles.h - Score-tile programs as fused kernels ---*- C++ -*-===//
//
// A score-tile program (GpuScoreTilesMatch.cpp finds it, GpuScoreTiles.cpp
// emits it): the linalg ops that compute L x L temporaries ("tiles": the
// scores s = q k^T, and values made of them elementwise or by contractions
// over a short dim, such as attention's probabilities and their gradient)
// and the ops that reduce them into outputs along the rows or the keys
// ("consumers": o[i, x] = sum_j F(i, j) * G(v[j, x]) and the same with rows
// and keys swapped, such as attention's dq, dk and dv). The kernels compute
// the tiles in registers, tile by tile, and never write the L x L values.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUSCORETILES_H
#define NEO_LIB_CODEGEN_GPU_GPUSCORETILES_H

#include "GpuAttention.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

#include <optional>
#include <vector>

namespace mlir {
namespace neo {
namespace scoretiles {

/// Roles of loops and axes: a batch dim (0, 1, ...), the rows, the keys,
/// the short dim of a contraction or of a consumer's output.
enum Role : int { kRow = -1, kKey = -2, kShort = -3 };

/// Rows (or keys) of a block; the most of the other side a tile holds.
constexpr int64_t kBlock = 32;
constexpr int64_t kTile = 32;
constexpr int64_t kMinTile = 8;
constexpr int64_t kLanes = 4;
constexpr int64_t kMaxLanes = 16;
/// The longest short dim (a consumer's accumulators: x / lanes registers).
constexpr int64_t kMaxShort = 256;

/// How a body argument of a program's op is read at a score.
struct Read {
  enum Kind { Tile, Vector, Staged, Unused } kind = Unused;
  int tile = -1;         // Tile: the tile value
  Value buffer;          // Vector: read from global memory
  SmallVector<int> axes; // Vector: the roles of its axes
  int stage = -1;        // Staged: the staged operand
};

/// An operand [batch, side, x] staged in shared memory: `side`'s block
/// once (the stationary side) or a tile at a time (the other side).
struct Stage {
  Value buffer;
  SmallVector<int> axes; // roles of its axes: all batch dims, side, kShort
  int side = kRow;
  int64_t extent = 0; // x
};

/// A tile value: an op writing an L x L buffer, elementwise (its body at
/// each score) or a contraction over a short dim x, computed as
/// init + F * sum_x G (G: the factors of the body's product that read the
/// staged operands, F: the others, which read no x).
struct TileOp {
  mutable linalg::GenericOp op; // (its accessors are not const)
  SmallVector<int> roles;
  SmallVector<Read> reads; // per block argument (the init's last)
  bool contraction = false;
  int64_t extent = 0;  // x
  int init = -1;       // the tile value it accumulates onto, or:
  Attribute initValue; // the constant its buffer was filled with
  SmallVector<Value> f, fDivisors, g;
  bool kept = false; // read by ops outside the program (not erased)
};

/// An output [batch, side, x] = init + sum over the other side of
/// F(score) * G(staged operand [batch, other, x]).
struct Consumer {
  mutable linalg::GenericOp op;
  SmallVector<int> roles;
  SmallVector<Read> reads;
  int side = kRow;
  int64_t extent = 0;
  int stage = -1; // G's operand
  Value gArg;
  SmallVector<Value> f, fDivisors, g;
  Operation *fill = nullptr;
  Attribute initValue;
};

struct Program {
  std::vector<TileOp> tiles;
  std::vector<Consumer> consumers;
  SmallVector<Stage> stages;
  SmallVector<int64_t> batch;
  int64_t rows = 0, keys = 0;
  Operation *last = nullptr; // the kernels go after it
  SmallVector<Operation *> erase;

  int64_t batches() const {
    int64_t n = 1;
    for (int64_t e : batch)
      n *= e;
    return n;
  }
  int64_t extentOf(int side) const { return side == kRow ? rows : keys; }
};

/// Whether a consumer goes to another kernel (the fused softmax attention's
/// o) once the program's other ops (`others`) are gone.
using LeaveFn =
    llvm::function_ref<bool(linalg::GenericOp consumer, const llvm::DenseSet<Operation *> &others)>;

/// The programs of `func` (top-level ops only), anchored each on a
/// contraction into an L x L temporary (not one of `refused`); at most one
/// kernel per side.
std::vector<Program> matchPrograms(func::FuncOp func, LeaveFn leave,
                                   const llvm::DenseSet<Operation *> &refused);

/// What one side's kernel computes: the tile values it needs (in program
/// order), its consumers, and the staged operands it reads: its side's once
/// (block stages), the other side's a tile at a time (tile stages).
struct Work {
  int side = kRow, other = kKey;
  SmallVector<int> tiles, consumers, blockStages, tileStages;
  /// The masks whose hidden positions it skips (skippableMasks).
  SmallVector<attention::KeyMask> masks;
};
Work workOf(const Program &p, int side);

/// The hypotheses key * j + row * i + offset > 0 (each select's comparison
/// of linear forms of the indices, holding or failing) under which every
/// consumer of `side` adds exactly 0 (GpuScoreTilesMask.cpp): the masks
/// whose hidden positions that kernel may skip. Each as `side` sees it:
/// `row` the coefficient of `side`'s index, `key` the other side's.
SmallVector<attention::KeyMask> skippableMasks(const Program &p, int side);

/// The parts the other side's `tiles` are split in over blocks (grid z)
/// when the `blocks` of all batches are fewer than the SMs of `target`: each
/// block adds its part to the outputs atomically.
int64_t splitFor(int64_t blocks, int64_t tiles, const GpuTarget &target);

/// The tiles [first, end) of the other side (`tiles` of `tile`) that part
/// `part` of `split` visits in the block whose `positions` positions start
/// at `s0`: those no mask of `w` hides from all of the block's positions,
/// in equal parts.
std::pair<Value, Value> tilesOfPart(OpBuilder &b, Location loc, const Work &w, Value s0,
                                    int64_t positions, int64_t tile, int64_t tiles, int64_t split,
                                    Value part);

/// x * the factors / the divisors (1 when there are none).
Value product(OpBuilder &b, Location loc, Value x, ArrayRef<Value> factors,
              ArrayRef<Value> divisors = {});

/// x * F, F a tile op's or consumer's factors over its divisors cloned
/// with the body's values from `map` and linalg.index from `index` (x when
/// there are none; with a null x, F itself).
Value timesF(OpBuilder &b, Location loc, Value x, ArrayRef<Value> f, ArrayRef<Value> divisors,
             IRMapping &map, llvm::function_ref<Value(unsigned)> index);

/// The indices of a side's kernel: its batch dims' (from grid y).
struct SideIndices {
  SmallVector<Value> batch;
  /// Of a buffer whose axes have `axes` roles, at a row, key and short index.
  SmallVector<Value> at(ArrayRef<int> axes, Value row, Value key, Value x) const;
  /// Of a consumer's output at its side's position `pos` and column `col`.
  SmallVector<Value> output(const Consumer &op, Value pos, Value col) const;
};

/// The launch of `w`'s side (grid: its positions / `positions`, the
/// batches, `split`; static shared buffers of `shared` or, when `dynamic`,
/// views of `bytes` of dynamic shared memory at `offsets`) named `kernel`,
/// the masks it skips by in `neo.key_masks` ((key, row, offset) each, as
/// the fused attention's). Its shared buffers go in `mem` (the first ones
/// those of w's block stages, then of its tile stages, also in `stageMem`
/// by stage) and its indices in `ivs`.
gpu::LaunchOp launchSide(OpBuilder &b, Location loc, const Program &p, const Work &w,
                         int64_t positions, int64_t split, int64_t threads, ArrayRef<Type> shared,
                         bool dynamic, int64_t bytes, ArrayRef<int64_t> offsets, StringRef kernel,
                         SmallVectorImpl<Value> &mem, llvm::DenseMap<int, Value> &stageMem,
                         SideIndices &ivs);

/// A side's kernel on tensor cores (GpuScoreTilesMma.cpp): a warp per 16
/// of its side's positions, the other side in tiles of `tile`.
struct MmaPlan {
  Work work;
  Type in; // the staged operands' 16-bit type
  int64_t warps = 4, tile = 64, split = 1, bytes = 0;
  bool dynamic = false;
  bool async = false;           // 16-byte cp.async, the tiles double-buffered
  SmallVector<int64_t> offsets; // dynamic: per shared buffer
  bool tf32 = false;            // f32 operands on m16n8k8 tf32
  int64_t positions() const { return 16 * warps; }
  int64_t threads() const { return 32 * warps; }
  int64_t buffers() const { return async ? 2 : 1; } // of the other side's tiles
  int64_t kStep() const { return tf32 ? 8 : 16; }
  /// The elements a shared row is padded by: 16 bytes (ldmatrix's 8 rows in
  /// distinct banks), 4 floats in tf32 (a scalar fragment's 32 loads).
  int64_t pad() const { return tf32 ? 4 : 8; }
  /// The columns of an operand of x = `extent` in shared memory (padded to
  /// k steps, and to 16 for the consumers' n fragments in pairs).
  int64_t cols(int64_t extent) const { return llvm::alignTo(extent, tf32 ? 8 : 16); }
};

/// The tensor-core kernel of `side`, when its staged operands are of one
/// 16-bit type (or, with `tf32`, all f32), its contractions products of one
/// staged operand of each side and its consumers' G one staged operand
/// (each possibly widened), and it fits; its warps and split fill the SMs of
/// `target`.
std::optional<MmaPlan> planMma(const Program &p, int side, bool tf32, const GpuTarget &target);

/// Emits the kernel of `k` at the builder's point.
void emitMmaKernel(OpBuilder &b, Location loc, const Program &p, const MmaPlan &k);

/// Moves each conversion (an elementwise truncf or extf of one buffer into
/// another) of what a reduction wrote as late as the ops in between allow,
/// so that a 16-bit training graph's conversion of a program's output (a
/// gradient) reads it after the program instead of keeping the output out
/// of the program.
void sinkConversions(func::FuncOp func);

} // namespace scoretiles
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUSCORETILES_H
