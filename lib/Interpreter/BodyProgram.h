//===- BodyProgram.h - Compiled bodies and maps of neo.compute --*- C++ -*-===//
//
// Private to the reference interpreter. A neo.compute body is compiled once
// into a flat program over an array of slots (one per SSA value; double for
// floats, int64 for integers of at most 64 bits and index), and each affine
// expression into a postfix program, so that evaluating an iteration point
// does no map lookups.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_INTERPRETER_BODYPROGRAM_H
#define NEO_LIB_INTERPRETER_BODYPROGRAM_H

#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace mlir {
namespace neo {
namespace detail {

/// An affine expression over iteration dims and index reads as a postfix program.
class AffineProgram {
public:
  /// Compiles `expr`. Symbol `s<j>` reads `dims[symbolBase + j]` (the
  /// interpreter stores the values of the index reads after the dims).
  explicit AffineProgram(AffineExpr expr, unsigned symbolBase = 0);

  /// Evaluates the expression at `dims`. Returns false on a division (or
  /// modulo) by zero. Additions and multiplications wrap.
  bool eval(const int64_t *dims, int64_t &result) const {
    if (!isLinear)
      return evalPostfix(dims, result);
    uint64_t r = constant;
    for (const Term &t : terms)
      r += static_cast<uint64_t>(dims[t.position]) * t.coefficient;
    result = static_cast<int64_t>(r);
    return true;
  }

private:
  enum class Step : uint8_t { Dim, Const, Add, Mul, FloorDiv, CeilDiv, Mod };
  struct Inst {
    Step step;
    int64_t value; // the dim position or the constant
  };
  /// An expression without divisions or modulos is kept only as
  /// constant + sum(coefficient * dims[position]) in wrapping (mod 2^64)
  /// arithmetic, which gives what the postfix program gives (a ring
  /// homomorphism) without its stack; the others as the postfix program.
  struct Term {
    unsigned position;
    uint64_t coefficient;
  };
  void append(AffineExpr expr);
  bool flatten(AffineExpr expr, uint64_t scale);
  bool evalPostfix(const int64_t *dims, int64_t &result) const;
  llvm::SmallVector<Inst, 4> insts;
  unsigned symbolBase = 0;
  bool isLinear = false;
  uint64_t constant = 0;
  llvm::SmallVector<Term, 4> terms;
};

/// arith.maximumf / arith.minimumf: NaN propagates and -0 < +0.
inline double maximumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline double minimumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

/// A scalar value: the type of its SSA value says which member is live.
/// Integers are kept sign-extended from their bit width (i1 true is -1).
union Slot {
  double f;
  int64_t i;
};

/// What stopped a run of a body program.
enum class Trap : uint8_t {
  None,
  DivisionByZero,    // arith.divsi / floordivsi / ceildivsi / remsi by 0
  FPToSIOutOfRange,  // arith.fptosi of NaN or of a value out of range
};

/// The compiled body of a neo.compute.
class BodyProgram {
public:
  /// Compiles the body of `op`. Emits an error at the offending op (e.g. "the
  /// reference interpreter does not support 'dialect.op'") and fails.
  static FailureOr<BodyProgram> compile(ComputeOp op);

  /// A slot array for `run`: constants are set; slot `i` is block argument
  /// `i`, which the caller writes (as double) before each run.
  std::vector<Slot> makeSlots() const { return initialSlots; }

  /// Evaluates the body at iteration point `dims` and returns its yielded
  /// value in `result`. On a trap, returns it with the failing instruction in
  /// `failedInst`.
  Trap run(Slot *slots, const int64_t *dims, double &result,
           unsigned &failedInst) const;

  /// Emits the diagnostic for a trap of `run` at the failing op.
  void reportTrap(Trap trap, unsigned failedInst, llvm::ArrayRef<int64_t> dims) const;

  enum class Opcode : uint8_t {
    Copy,      // r = a (extf, truncf)
    Index,     // r.i = dims[imm]
    UnaryF,    // r.f = fn(a.f)
    AddF, SubF, MulF, DivF, RemF, PowF,
    MaximumF, MinimumF, MaxNumF, MinNumF,
    CmpF,      // r.i = pred(a.f, b.f) ? -1 : 0
    Select,    // r = c.i ? a : b  (operands a=cond, b=true, c=false)
    AddI, SubI, MulI, DivSI, FloorDivSI, CeilDivSI, RemSI,
    AndI, OrI, XOrI, MaxSI, MinSI,
    CmpI,      // r.i = pred(a.i, b.i) ? -1 : 0; srcWidth: operand width
    SExt,      // r.i = sext(a.i to width): index_cast, extsi, trunci
    ZExt,      // r.i = sext(zext(a.i from srcWidth) to width): index_castui, extui
    SIToFP,    // r.f = a.i
    UIToFP,    // r.f = zext(a.i from srcWidth)
    FPToSI,    // r.i = trunc(a.f), trapping when out of range of width
  };

private:
  struct Inst {
    Opcode opcode;
    uint8_t predicate = 0;
    uint8_t width = 64;    // bit width of an integer result (cmpi: operands)
    uint8_t srcWidth = 64; // bit width of an integer operand (casts)
    uint32_t res = 0, a = 0, b = 0, c = 0;
    int64_t imm = 0;
    double (*fn)(double) = nullptr;
  };
  friend class BodyCompiler;

  std::vector<Inst> insts;
  std::vector<Operation *> instOps; // the op of each instruction
  std::vector<Slot> initialSlots;
  unsigned yieldSlot = 0;
};

} // namespace detail
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_INTERPRETER_BODYPROGRAM_H
