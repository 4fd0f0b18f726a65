//===- GpuAttention.h - Softmax attention as one fused kernel ---*- C++ -*-===//
//
// What GpuAttentionMatch.cpp finds (the four linalg ops of a softmax
// attention and their roles) and GpuAttention.cpp turns into one kernel.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUATTENTION_H
#define NEO_LIB_CODEGEN_GPU_GPUATTENTION_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "GpuKernelBuilder.h"

#include <optional>

namespace mlir {
namespace neo {
namespace attention {

// (Past kMaxStaticShared the tiles go in dynamic shared memory; the launch
// opts in.)
using gpukernel::kMaxDynamicShared;
using gpukernel::kMaxStaticShared;

/// Query rows per thread block; threads per row (4, or 8 or 16 when the
/// rows of all batches are too few to give every SM four warps); the most
/// keys per tile (fewer, down to 8, where wide heads' tiles pass 48 KiB).
constexpr int64_t kRows = 32;
constexpr int64_t kMinLanes = 4;
constexpr int64_t kMaxLanes = 16;
constexpr int64_t kKeys = 32;
constexpr int64_t kMinKeys = 8;
/// The most columns of v (a row's accumulator: E / 4 registers a thread).
constexpr int64_t kMaxValueCols = 256;

/// A mask in phi: phi is a constant of at most -1e9 (or -inf), whatever
/// the score, wherever key * j + row * i + offset > 0 (j the key, i the
/// query row). A causal `select(j <= i, s, -1e30)` is j - i > 0.
struct KeyMask {
  int64_t key = 0, row = 0, offset = 0;
  bool operator==(const KeyMask &o) const {
    return key == o.key && row == o.row && offset == o.offset;
  }
  /// Rows and keys swapped (the mask as the keys' side sees it).
  KeyMask transposed() const { return {row, key, offset}; }
};
/// Masked scores contribute exp(C - m) = 0 once a row has a score above
/// C + 104, so a key tile masked for all of a block's rows is skipped.
constexpr double kMaskAtMost = -1e9;

/// The roles of loops and axes: a batch dim (0, 1, ...), the query rows,
/// the keys, o's columns, the contraction's d.
enum Role : int { kRow = -1, kKey = -2, kCol = -3, kRed = -4 };

/// A softmax attention: s = q k^T (the contraction `gemm`, any body),
/// optionally rewritten in place by an elementwise `epilogue` (psi, which
/// may read other buffers by batch, row and key), a row max
/// m = max_j phi(s), a row sum z = sum_j exp(phi(s) - m) and
/// o = sum_j exp(phi(s) - m) / z * g(v), phi an expression of the score,
/// the loop indices and reads of bias buffers.
struct Attention {
  linalg::GenericOp gemm, epilogue, max, sum, out;
  scf::ForallOp rows; // the row-block loop of max and sum, if any
  // The ops that initialize s, m, z and o (fills, or copies of a filled
  // buffer; in the row loop, fills of the row) and the constants of s and m.
  Operation *scoreFill = nullptr, *maxFill = nullptr, *sumFill = nullptr, *outFill = nullptr;
  Attribute scoreInit, maxInit;
  Value scores, m, z;      // the L x L buffer and the row statistics
  // With an epilogue writing the scores into another buffer (bufferization
  // does so when it reuses the scores' buffer later): the contraction's.
  Value source;
  bool writeStats = false; // m or z is read after o, or is a result
  bool keySplit = true;    // its key tiles may split over blocks (KeySplit)
  GpuTarget target;        // the SMs its blocks fill
  // The role of each loop of o, the contraction and the epilogue, and of
  // each axis of s and of m (and z).
  SmallVector<int> outRoles, gemmRoles, epilogueRoles, scoreAxes, statAxes;
  SmallVector<int64_t> batch;                 // the batch dims' extents
  unsigned rowAxis = 0;                       // the axis of s that o's rows index
  OpOperand *query = nullptr, *key = nullptr; // the contraction's inputs
  int64_t lq = 0, lk = 0, d = 0, e = 0;
  int64_t lanes = kMinLanes; // threads per query row
  // o's body: the score, the statistics, v; phi and the factors of v.
  Value sArg, mArg, zArg, vArg, phi, psi;
  SmallVector<Value> valueFactors;
  // Other reads in phi (an additive bias b[i, j], a key padding mask
  // p[j]: buffers indexed by batch dims, rows and keys only): o's block
  // arguments and their buffers.
  SmallVector<Value> biasArgs, biases;
  SmallVector<SmallVector<int>> biasAxes;
  Operation *maxCombiner = nullptr;
  // The masks of phi, when every query row keeps a key none of them masks
  // (empty otherwise: a fully masked row averages all of v).
  SmallVector<KeyMask> masks;
  // The conversion of o (a temporary read by nothing else) into a 16-bit
  // buffer (`o = bf16(sum ...)`), which the kernel then writes instead.
  linalg::GenericOp convert;

  /// The product of the batch dims' extents (the grid's y).
  int64_t batches() const {
    int64_t n = 1;
    for (int64_t extent : batch)
      n *= extent;
    return n;
  }
  /// o's operand of a block argument of its body, and its indexing map.
  Value operandOf(Value arg) const;
  AffineMap mapOf(Value arg) const;
};

/// The kernel's shared tiles: `keys` keys per tile (32, 16 or 8, at least
/// the lanes of a row: the most whose tiles fit in 48 KiB), q and k rows of
/// `pitch` elements (odd, so that a warp's reads of its rows fall in
/// distinct banks), v rows of `cols` (E rounded up to the lanes of a row),
/// their bytes with the block's probabilities (32 x keys + 1). When none
/// fits, the fewest keys, in dynamic shared memory (`dynamic`; each tile at
/// a 16-byte aligned offset, `bytes` with the padding).
struct Tiles {
  int64_t keys, pitch, cols, bytes;
  bool dynamic = false;
  /// The byte offsets of the q, k, v and probability tiles.
  SmallVector<int64_t, 4> offsets;
};
Tiles tilesOf(const Attention &a);

/// Sets `a.masks`: the selects at the top of phi (or of the epilogue's psi
/// when phi is the score) that give a constant of at most kMaskAtMost when a
/// comparison of linear forms of the row and key indices holds or fails
/// (GpuAttentionMask.cpp).
void findMasks(Attention &a);

/// The mask that `select` (in a body whose loops have `roles`, over rows
/// [0, lq) and keys [0, lk)) applies: one branch a constant of at most
/// kMaskAtMost, its condition a comparison of linear forms of the row and
/// key indices; `kept` gets the other branch.
std::optional<KeyMask> maskOf(arith::SelectOp select, ArrayRef<int> roles, int64_t lq, int64_t lk,
                              Value *kept = nullptr);

/// h with `cond` true exactly where h > 0 (as a KeyMask: key * j + row * i
/// + offset), when `cond` is a comparison of linear forms of the row and key
/// indices of a body whose loops have `roles`.
std::optional<KeyMask> truthOf(Value cond, ArrayRef<int> roles, int64_t lq, int64_t lk);

/// Whether every row in [0, lq) keeps a key in [0, lk) that no mask hides.
bool everyRowKeepsAKey(ArrayRef<KeyMask> masks, int64_t lq, int64_t lk);

/// The kernel's loop values by role: the block's batch indices (`batch`),
/// and the row, key, column and reduction values given.
struct RoleIvs {
  SmallVector<Value> batch;
  SmallVector<Value> operator()(ArrayRef<int> roles, Value row, Value key, Value col,
                                Value red) const;
};

/// The launch of an attention kernel `kernel`: a block per `rows` query
/// rows (grid y: the batch dims) of `threads` threads, the shared buffers
/// `workgroup` (in `bytes` of dynamic shared memory when `dynamic`), the
/// masks' (key, row, offset) in `neo.key_masks`, the key tiles split in
/// `parts` over grid z (`neo.key_parts`). The builder is left in its body.
gpu::LaunchOp createAttentionLaunch(OpBuilder &b, Location loc, const Attention &a,
                                    StringRef kernel, int64_t rows, int64_t threads,
                                    ArrayRef<Type> workgroup, bool dynamic, int64_t bytes,
                                    int64_t parts = 1);

/// The indices of an operand (its map's dims) at the loop values `ivs`.
SmallVector<Value> indicesAt(AffineMap map, ArrayRef<Value> ivs);

/// An f32 constant, and f32 -inf (the row maximum before any key).
Value f32Const(OpBuilder &b, Location loc, double v);
Value f32NegInf(OpBuilder &b, Location loc);

/// What the scores of a row with running maximum `m` subtract: m, or 0 where
/// m is -inf (no finite score yet), so exp(-inf - m) is 0, never NaN.
Value maxToSubtract(OpBuilder &b, Location loc, Value m, Value negInf, Value zero);

/// `v` combined across the `lanes` lanes of a row (aligned groups of a
/// warp) by xor shuffles.
Value shuffleCombine(OpBuilder &b, Location loc, Value v, int64_t lanes,
                     llvm::function_ref<Value(Value, Value)> combineFn);

/// A key split (GpuAttentionSplit.cpp, as flash-decoding): when the blocks
/// of all batches are fewer than the SMs, the key tiles in `parts` parts
/// over blocks (grid z), each block writing its rows' unnormalized o (`acc`:
/// parts x batches x lq x e) and statistics (`m`, `z`: parts x batches x lq)
/// into f32 scratch, a second launch combining them.
struct KeySplit {
  int64_t parts = 1;
  Value acc, m, z;
};

/// The split of `a` run by blocks of `rows` rows and `threads` threads over
/// tiles of `keys` keys, its scratch allocated at the builder's point when
/// it splits: parts doubled while the blocks leave SMs idle or give them
/// fewer than 4 warps each, a block having 16 tiles or more, a part 4.
KeySplit planKeySplit(OpBuilder &b, Location loc, const Attention &a, int64_t rows, int64_t keys,
                      int64_t threads);

/// The tiles of [first, end) that part `part` of `parts` visits: an equal
/// share (all of them when `parts` is 1).
std::pair<Value, Value> partOfTiles(OpBuilder &b, Location loc, Value first, Value end,
                                    int64_t parts, Value part);

/// A row's result at column `col` from its accumulator `acc` and sum `z`:
/// o = acc / z (storeOutput), or with a split the part's acc into the
/// scratch (`batch`: the block's linear batch, `part` its part).
void storeRowOutput(OpBuilder &b, Location loc, const Attention &a, const KeySplit &split,
                    const RoleIvs &ivsOf, Value batch, Value part, Value row, Value col, Value acc,
                    Value z);

/// A row's statistics: storeStats, or with a split the part's into the
/// scratch (written whenever the kernel splits, by one thread a row).
void storeRowStats(OpBuilder &b, Location loc, const Attention &a, const KeySplit &split,
                   const RoleIvs &ivsOf, Value batch, Value part, Value row, Value m, Value z);

/// With a split, the launch that combines the parts (o, and m and z when
/// read later) at the builder's point, and the scratch's deallocs.
void emitKeyCombine(OpBuilder &b, Location loc, const Attention &a, const KeySplit &split);

/// The key tiles [first, end) of `keys` keys of the block whose `rows`
/// query rows start at `q0` that no mask of `masks` hides from all of them.
std::pair<Value, Value> unmaskedTiles(OpBuilder &b, Location loc, ArrayRef<KeyMask> masks, Value q0,
                                      int64_t rows, int64_t keys, int64_t keyTiles);
/// The same range computed here, for the block starting at row `q0`.
std::pair<int64_t, int64_t> unmaskedTiles(ArrayRef<KeyMask> masks, int64_t q0, int64_t rows,
                                          int64_t keys, int64_t keyTiles);
/// The most key tiles any block of `rows` rows (of `lq`) visits: all
/// `keyTiles` without masks; under a band, the band's width in tiles. What
/// a key split divides (its parts run in parallel, the longest block last).
int64_t mostUnmaskedTiles(ArrayRef<KeyMask> masks, int64_t lq, int64_t rows, int64_t keys,
                          int64_t keyTiles);

/// phi of the contraction's value `score` at (row, key), after the
/// epilogue's psi; their bias reads at (lastRow, lastKey), in bounds.
Value phiOf(OpBuilder &b, Location loc, const Attention &a, const RoleIvs &ivsOf, Value score,
            Value row, Value key, Value lastRow, Value lastKey);

/// Stores o's value `v` at `indices` (of o's buffer): into o, or converted
/// into the conversion's buffer (`a.convert`).
void storeOutput(OpBuilder &b, Location loc, const Attention &a, Value v, ValueRange indices);

/// Stores a row's m and z (z as NaN where m is -inf, as the ops compute).
void storeStats(OpBuilder &b, Location loc, const Attention &a, const RoleIvs &ivsOf, Value row,
                Value m, Value z);

/// Erases the ops a kernel replaced (and the buffers only they used);
/// returns the ops.
SmallVector<Operation *> eraseAttentionOps(RewriterBase &rewriter, Attention &a);

/// The tensor-core kernel (GpuAttentionMma.cpp): warps of 16 query rows,
/// key tiles of `keys`, q, k and v tiles of the 16-bit input type `in` in
/// shared memory with rows of `dp` (`ep`) elements plus `pad()`.
struct MmaTiles {
  Type in;
  double scale = 1.0; // the contraction's constant factors
  int64_t warps = 4, keys = 64, dp = 0, ep = 0, bytes = 0;
  bool dynamic = false;
  SmallVector<int64_t, 4> offsets;
  /// q, k and v travel by 16-byte cp.async (each contiguous along d, or v
  /// along its columns, a multiple of 8 elements): k and v tiles in two
  /// stages, one barrier per tile. Otherwise the threads stage them, two
  /// barriers per tile.
  bool async = false;
  /// f32 q, k and v on m16n8k8 tf32 (scalar fragment loads; p stays f32,
  /// the MMA rounds it to tf32).
  bool tf32 = false;
  int64_t rows() const { return 16 * warps; }
  int64_t stages() const { return async ? 2 : 1; }
  int64_t kStep() const { return tf32 ? 8 : 16; }
  /// Row padding in elements: 16 bytes for ldmatrix's 8 rows in distinct
  /// banks; 4 floats for tf32, whose scalar fragment loads (8 rows x 4
  /// columns, or 4 rows 2 apart x 8 columns) then fall in distinct banks.
  int64_t pad() const { return tf32 ? 4 : 8; }
};

/// The tensor-core kernel's tiles when it runs `a`: q, k and v of one
/// 16-bit type (f16 or bf16), or f32 with `tf32`, a contraction
/// `init + sum_d c * q * k` (widened, c constant), o's factor of v v itself
/// (widened), d and e at most 256.
std::optional<MmaTiles> planMmaAttention(const Attention &a, bool tf32);

/// Replaces the ops of `a` by the tensor-core kernel; returns the ops it
/// erased.
SmallVector<Operation *> emitAttentionMma(RewriterBase &rewriter, Attention &a,
                                          const MmaTiles &tiles);

/// The attention whose o is `out` (an op of `func`'s body), when the fused
/// kernel computes exactly what the ops do.
/// With `ignore`, as if those ops (which read s; a score-tile program's,
/// GpuScoreTiles.h) were gone. Its threads per row fill the SMs of `target`.
std::optional<Attention> matchAttention(linalg::GenericOp out, func::FuncOp func,
                                        const llvm::DenseSet<Operation *> *ignore = nullptr,
                                        const GpuTarget &target = {});

} // namespace attention
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUATTENTION_H
