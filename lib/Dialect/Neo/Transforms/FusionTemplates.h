//===- FusionTemplates.h - Ops as e-graph terms -----------------*- C++ -*-===//
//
// neo-eqsat-fuse represents a neo op as an e-node whose payload is a
// *template*: a detached copy of the op whose operands are placeholders, so
// that the e-node's children say what it reads. Templates are interned
// (structurally equal ops share one id) so that equal terms hash-cons.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_DIALECT_NEO_TRANSFORMS_FUSIONTEMPLATES_H
#define NEO_LIB_DIALECT_NEO_TRANSFORMS_FUSIONTEMPLATES_H

#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace mlir {
namespace neo {
namespace fusion {

class TemplateStore {
public:
  explicit TemplateStore(MLIRContext *ctx);

  /// Interns a copy of `op` (a neo.compute or neo.fused) with fresh
  /// placeholder operands; returns its id.
  unsigned intern(Operation *op);
  /// Interns `op`, which must already live in the store's scratch block
  /// (built by a rule); erases it when an equal template exists.
  unsigned internBuilt(Operation *op);

  Operation *get(unsigned id) const { return ops[id]; }
  size_t size() const { return ops.size(); }

  /// A builder at the end of the scratch block, for rules that build templates.
  OpBuilder builder();
  /// A fresh placeholder operand of `type`.
  Value placeholder(Type type);

  /// isContractionShaped / isBilinear of template `id` (false for a
  /// neo.fused), computed once: the cost function and the rules ask for
  /// every e-node they look at, and the walk was a fifth of the pass's time.
  bool contractionShaped(unsigned id);
  bool bilinear(unsigned id);

private:
  /// Per template: bit 0 set once computed, bit 1 contraction, bit 2 bilinear.
  uint8_t shapeOf(unsigned id);

  MLIRContext *ctx;
  OwningOpRef<ModuleOp> scratch;
  Block *block;
  std::vector<Operation *> ops;
  std::vector<uint8_t> shapes;
  llvm::DenseMap<unsigned, std::vector<unsigned>> byHash;
};

/// Inlines the producer `producer` (kind none, no domain) into read `read`
/// of `consumer`: the reads of the producer, composed with the consumer's map,
/// take the read's place. Returns the new op (in the store's scratch block),
/// whose operands are the consumer's other operands followed by the
/// producer's, or null when the fusion does not apply.
ComputeOp inlineProducer(TemplateStore &store, ComputeOp consumer, unsigned read,
                         ComputeOp producer);

/// A multi-output kernel computing `a` and `b` (same iteration space) in one
/// loop nest: a neo.fused op whose operands are a's then b's.
FusedOp fuseHorizontally(TemplateStore &store, ComputeOp a, ComputeOp b);

/// sum_r a * b(r) = a * sum_r b(r) (and sum_r b(r) / a) when `a` depends on
/// no reduction dim: the reduction of `b` (its operands are the reads of `b`
/// in order) and the elementwise product (the reads of `a`, then the sum).
struct Factored {
  ComputeOp sum, outer;
  /// The reads of the original op that each keeps, in operand order (the
  /// outer op's last operand is the sum).
  SmallVector<unsigned> sumReads, outerReads;
};
std::optional<Factored> factorOutOfReduction(TemplateStore &store, ComputeOp op);

/// x*y + x*z = x*(y + z) (and -) in the body: the op with one multiply
/// fewer per iteration and the same operands, or null.
ComputeOp distributeCommonFactor(TemplateStore &store, ComputeOp op);

/// sum over r of a body that depends on no reduction dim is extent * body.
ComputeOp foldBroadcastReduction(TemplateStore &store, ComputeOp op);

/// Whether two compute ops have the same iteration space, kind and domain.
bool sameIterationSpace(ComputeOp a, ComputeOp b);

/// Whether the body of `op` is `yield mulf(arg0, arg1)` with matmul maps
/// (i, k) and (k, j) and a sum over k.
bool isPlainMatmul(ComputeOp op);
/// A plain matmul template of `a x b` (element type `elem`).
ComputeOp buildMatmul(TemplateStore &store, RankedTensorType a, RankedTensorType b);

/// A kernel shaped like a contraction (a sum of products of two in-bounds
/// reads through projected permutations): neo-tile's packed GEMM takes it.
bool isContractionShaped(ComputeOp op);

/// A sum of products whose two factors read disjoint operands (through any
/// index maps and elementwise math): neo-tile runs it as an implicit GEMM
/// (a convolution, a shifted or padded contraction).
bool isBilinear(ComputeOp op);

/// The GPU's costs for row grouping (neo-eqsat-fuse target=gpu): a
/// row-blocked kernel runs a thread block per row on CUDA cores (its
/// contractions too: no tensor cores, no tiles shared between rows), every
/// row reads the operands that are not indexed by row again (from L2), and
/// it keeps the GPU busy only with enough rows; each kernel it replaces runs
/// at its own kernel's pace with its own parallelism and a launch of its
/// own. A kernel's time: launch + max(traffic, work) / busy, where busy is
/// its threads over `threads` (at most 1).
struct GpuRowCosts {
  double bandwidth = 3.0e6;    // DRAM bytes per microsecond
  double l2Bandwidth = 9.0e6;  // bytes per microsecond
  double gemmPeak = 5.0e7;     // contraction flops per microsecond, own kernel
  double rowGemmPeak = 1.25e7; // contraction flops per microsecond, per row
  double otherPeak = 1.5e6;    // other (weighted) flops per microsecond
  double launch = 5.0;         // microseconds
  int64_t threads = 132 * 256; // threads that keep the GPU busy (a block per SM: sm-count)
};

struct RowBlockOptions {
  /// Fewest blocks of rows a row-blocked kernel runs (its parallelism).
  int64_t minBlocks = 4;
  /// On a GPU, a merge must also lower the estimated time (GpuRowCosts).
  std::optional<GpuRowCosts> gpu;
  /// Most bytes of results and row-sliced operands per block.
  int64_t blockBytes = 256 * 1024;
  /// When grouping stops: the groups formed by then are kept (each merge is
  /// checked on its own, so any prefix of them is valid).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

/// Groups the kernels of `func` that share their leading parallel dim and
/// pass values row by row into row-blocked neo.fused kernels (RowBlocks.cpp).
/// Returns the number of kernels formed.
unsigned formRowBlocks(func::FuncOp func, const RowBlockOptions &options);

} // namespace fusion
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_DIALECT_NEO_TRANSFORMS_FUSIONTEMPLATES_H
