//===- BodyProgram.cpp - Compiled bodies and maps of neo.compute ----------===//
#include "BodyProgram.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::detail;

//===----------------------------------------------------------------------===//
// AffineProgram
//===----------------------------------------------------------------------===//

AffineProgram::AffineProgram(AffineExpr expr, unsigned symbolBase) : symbolBase(symbolBase) {
  isLinear = flatten(expr, 1);
  if (isLinear)
    return;
  terms.clear();
  constant = 0;
  append(expr);
}

/// Adds `scale * expr` to the linear form; false if `expr` divides, takes a
/// modulo or multiplies two non-constant terms.
bool AffineProgram::flatten(AffineExpr expr, uint64_t scale) {
  if (auto cst = dyn_cast<AffineConstantExpr>(expr)) {
    constant += static_cast<uint64_t>(cst.getValue()) * scale;
    return true;
  }
  unsigned position = 0;
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    position = dim.getPosition();
  else if (auto sym = dyn_cast<AffineSymbolExpr>(expr))
    position = symbolBase + sym.getPosition();
  else if (expr.getKind() == AffineExprKind::Add) {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    return flatten(bin.getLHS(), scale) && flatten(bin.getRHS(), scale);
  } else if (expr.getKind() == AffineExprKind::Mul) {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    AffineExpr factor = bin.getRHS(), other = bin.getLHS();
    if (!isa<AffineConstantExpr>(factor))
      std::swap(factor, other);
    auto cst = dyn_cast<AffineConstantExpr>(factor);
    return cst && flatten(other, scale * static_cast<uint64_t>(cst.getValue()));
  } else {
    return false;
  }
  for (Term &t : terms)
    if (t.position == position) {
      t.coefficient += scale;
      return true;
    }
  terms.push_back({position, scale});
  return true;
}

void AffineProgram::append(AffineExpr expr) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    insts.push_back({Step::Dim, dim.getPosition()});
    return;
  }
  if (auto sym = dyn_cast<AffineSymbolExpr>(expr)) {
    insts.push_back({Step::Dim, symbolBase + sym.getPosition()});
    return;
  }
  if (auto cst = dyn_cast<AffineConstantExpr>(expr)) {
    insts.push_back({Step::Const, cst.getValue()});
    return;
  }
  auto bin = cast<AffineBinaryOpExpr>(expr);
  append(bin.getLHS());
  append(bin.getRHS());
  Step step = Step::Add;
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    step = Step::Add;
    break;
  case AffineExprKind::Mul:
    step = Step::Mul;
    break;
  case AffineExprKind::FloorDiv:
    step = Step::FloorDiv;
    break;
  case AffineExprKind::CeilDiv:
    step = Step::CeilDiv;
    break;
  case AffineExprKind::Mod:
    step = Step::Mod;
    break;
  default:
    llvm_unreachable("symbols are rejected before compiling affine expressions");
  }
  insts.push_back({step, 0});
}

/// floor(a / b) and ceil(a / b) for b != 0, without overflow traps.
static int64_t floorDiv(int64_t a, int64_t b) {
  if (b == -1)
    return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  return llvm::divideFloorSigned(a, b);
}
static int64_t ceilDiv(int64_t a, int64_t b) {
  if (b == -1)
    return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  return llvm::divideCeilSigned(a, b);
}
static int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
static int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
static int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

bool AffineProgram::evalPostfix(const int64_t *dims, int64_t &result) const {
  if (insts.size() == 1) {
    result = insts[0].step == Step::Dim ? dims[insts[0].value] : insts[0].value;
    return true;
  }
  llvm::SmallVector<int64_t, 16> stack;
  for (const Inst &inst : insts) {
    switch (inst.step) {
    case Step::Dim:
      stack.push_back(dims[inst.value]);
      continue;
    case Step::Const:
      stack.push_back(inst.value);
      continue;
    default:
      break;
    }
    int64_t rhs = stack.pop_back_val();
    int64_t &lhs = stack.back();
    switch (inst.step) {
    case Step::Add:
      lhs = wrapAdd(lhs, rhs);
      break;
    case Step::Mul:
      lhs = wrapMul(lhs, rhs);
      break;
    case Step::FloorDiv:
      if (rhs == 0)
        return false;
      lhs = floorDiv(lhs, rhs);
      break;
    case Step::CeilDiv:
      if (rhs == 0)
        return false;
      lhs = ceilDiv(lhs, rhs);
      break;
    case Step::Mod:
      // The remainder of floor division: non-negative for a positive divisor.
      if (rhs == 0)
        return false;
      lhs = wrapSub(lhs, wrapMul(floorDiv(lhs, rhs), rhs));
      break;
    case Step::Dim:
    case Step::Const:
      break;
    }
  }
  result = stack.back();
  return true;
}

//===----------------------------------------------------------------------===//
// Scalar semantics
//===----------------------------------------------------------------------===//

/// `v` truncated to `width` bits and sign-extended back to 64.
static int64_t sext(uint64_t v, unsigned width) {
  return width >= 64 ? static_cast<int64_t>(v) : llvm::SignExtend64(v, width);
}
/// `v` truncated to `width` bits, zero-extended.
static uint64_t zext(int64_t v, unsigned width) {
  uint64_t u = static_cast<uint64_t>(v);
  return width >= 64 ? u : u & llvm::maskTrailingOnes<uint64_t>(width);
}

static bool compareF(arith::CmpFPredicate pred, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (pred) {
  case P::AlwaysFalse:
    return false;
  case P::OEQ:
    return !unordered && a == b;
  case P::OGT:
    return !unordered && a > b;
  case P::OGE:
    return !unordered && a >= b;
  case P::OLT:
    return !unordered && a < b;
  case P::OLE:
    return !unordered && a <= b;
  case P::ONE:
    return !unordered && a != b;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || a == b;
  case P::UGT:
    return unordered || a > b;
  case P::UGE:
    return unordered || a >= b;
  case P::ULT:
    return unordered || a < b;
  case P::ULE:
    return unordered || a <= b;
  case P::UNE:
    return unordered || a != b;
  case P::UNO:
    return unordered;
  case P::AlwaysTrue:
    return true;
  }
  return false;
}

static bool compareI(arith::CmpIPredicate pred, int64_t a, int64_t b, unsigned width) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::eq:
    return a == b;
  case P::ne:
    return a != b;
  case P::slt:
    return a < b;
  case P::sle:
    return a <= b;
  case P::sgt:
    return a > b;
  case P::sge:
    return a >= b;
  case P::ult:
    return zext(a, width) < zext(b, width);
  case P::ule:
    return zext(a, width) <= zext(b, width);
  case P::ugt:
    return zext(a, width) > zext(b, width);
  case P::uge:
    return zext(a, width) >= zext(b, width);
  }
  return false;
}

//===----------------------------------------------------------------------===//
// BodyProgram::run
//===----------------------------------------------------------------------===//

Trap BodyProgram::run(Slot *s, const int64_t *dims, double &result,
                      unsigned &failedInst) const {
  for (unsigned n = 0, e = insts.size(); n < e; ++n) {
    const Inst &in = insts[n];
    Slot &r = s[in.res];
    const Slot &a = s[in.a];
    const Slot &b = s[in.b];
    switch (in.opcode) {
    case Opcode::Copy:
      r = a;
      break;
    case Opcode::Index:
      r.i = dims[in.imm];
      break;
    case Opcode::UnaryF:
      r.f = in.fn(a.f);
      break;
    case Opcode::AddF:
      r.f = a.f + b.f;
      break;
    case Opcode::SubF:
      r.f = a.f - b.f;
      break;
    case Opcode::MulF:
      r.f = a.f * b.f;
      break;
    case Opcode::DivF:
      r.f = a.f / b.f;
      break;
    case Opcode::RemF:
      r.f = std::fmod(a.f, b.f);
      break;
    case Opcode::PowF:
      r.f = std::pow(a.f, b.f);
      break;
    case Opcode::MaximumF:
      r.f = maximumF(a.f, b.f);
      break;
    case Opcode::MinimumF:
      r.f = minimumF(a.f, b.f);
      break;
    case Opcode::MaxNumF:
      r.f = std::fmax(a.f, b.f);
      break;
    case Opcode::MinNumF:
      r.f = std::fmin(a.f, b.f);
      break;
    case Opcode::CmpF:
      r.i = compareF(static_cast<arith::CmpFPredicate>(in.predicate), a.f, b.f) ? -1 : 0;
      break;
    case Opcode::Select:
      r = a.i ? b : s[in.c];
      break;
    case Opcode::AddI:
      r.i = sext(static_cast<uint64_t>(a.i) + static_cast<uint64_t>(b.i), in.width);
      break;
    case Opcode::SubI:
      r.i = sext(static_cast<uint64_t>(a.i) - static_cast<uint64_t>(b.i), in.width);
      break;
    case Opcode::MulI:
      r.i = sext(static_cast<uint64_t>(a.i) * static_cast<uint64_t>(b.i), in.width);
      break;
    case Opcode::DivSI:
    case Opcode::FloorDivSI:
    case Opcode::CeilDivSI:
    case Opcode::RemSI: {
      int64_t x = a.i, y = b.i;
      if (y == 0) {
        failedInst = n;
        return Trap::DivisionByZero;
      }
      int64_t v;
      if (in.opcode == Opcode::RemSI)
        v = y == -1 ? 0 : x % y;
      else if (y == -1) // INT_MIN / -1 wraps (it is poison in arith)
        v = static_cast<int64_t>(0 - static_cast<uint64_t>(x));
      else if (in.opcode == Opcode::DivSI)
        v = x / y;
      else if (in.opcode == Opcode::FloorDivSI)
        v = llvm::divideFloorSigned(x, y);
      else
        v = llvm::divideCeilSigned(x, y);
      r.i = sext(static_cast<uint64_t>(v), in.width);
      break;
    }
    case Opcode::AndI:
      r.i = a.i & b.i;
      break;
    case Opcode::OrI:
      r.i = a.i | b.i;
      break;
    case Opcode::XOrI:
      r.i = a.i ^ b.i;
      break;
    case Opcode::MaxSI:
      r.i = a.i > b.i ? a.i : b.i;
      break;
    case Opcode::MinSI:
      r.i = a.i < b.i ? a.i : b.i;
      break;
    case Opcode::CmpI:
      r.i = compareI(static_cast<arith::CmpIPredicate>(in.predicate), a.i, b.i, in.width)
                ? -1
                : 0;
      break;
    case Opcode::SExt:
      r.i = sext(static_cast<uint64_t>(a.i), in.width);
      break;
    case Opcode::ZExt:
      r.i = sext(zext(a.i, in.srcWidth), in.width);
      break;
    case Opcode::SIToFP:
      r.f = static_cast<double>(a.i);
      break;
    case Opcode::UIToFP:
      r.f = static_cast<double>(zext(a.i, in.srcWidth));
      break;
    case Opcode::FPToSI: {
      double t = std::trunc(a.f);
      double lo = -std::ldexp(1.0, in.width - 1), hi = std::ldexp(1.0, in.width - 1);
      if (!(t >= lo && t < hi)) {
        failedInst = n;
        return Trap::FPToSIOutOfRange;
      }
      r.i = static_cast<int64_t>(t);
      break;
    }
    }
  }
  result = s[yieldSlot].f;
  return Trap::None;
}

void BodyProgram::reportTrap(Trap trap, unsigned failedInst,
                             llvm::ArrayRef<int64_t> dims) const {
  Operation *op = instOps[failedInst];
  InFlightDiagnostic diag = op->emitError();
  switch (trap) {
  case Trap::DivisionByZero:
    diag << "integer division by zero in '" << op->getName() << "'";
    break;
  case Trap::FPToSIOutOfRange:
    diag << "'" << op->getName()
         << "' of a value that is NaN or out of range of the result type";
    break;
  case Trap::None:
    break;
  }
  diag << " at iteration point (";
  llvm::interleaveComma(dims, diag);
  diag << ")";
}

//===----------------------------------------------------------------------===//
// BodyProgram::compile
//===----------------------------------------------------------------------===//

namespace mlir {
namespace neo {
namespace detail {
class BodyCompiler {
public:
  explicit BodyCompiler(BodyProgram &program) : program(program) {}
  LogicalResult compile(ComputeOp op);

private:
  using Opcode = BodyProgram::Opcode;
  /// The class of a scalar type: float, or integer of `width` bits (index is
  /// 64); none for other types.
  struct ScalarClass {
    bool isFloat;
    unsigned width;
  };
  static std::optional<ScalarClass> classify(Type type);

  LogicalResult compileOp(Operation &op);
  unsigned newSlot(Value value) {
    unsigned slot = program.initialSlots.size();
    program.initialSlots.push_back(Slot{0.0});
    slots[value] = slot;
    return slot;
  }
  BodyProgram::Inst &emit(Operation &op, Opcode opcode) {
    program.insts.push_back({});
    program.insts.back().opcode = opcode;
    program.instOps.push_back(&op);
    return program.insts.back();
  }

  BodyProgram &program;
  llvm::DenseMap<Value, unsigned> slots;
};
} // namespace detail
} // namespace neo
} // namespace mlir

std::optional<BodyCompiler::ScalarClass> BodyCompiler::classify(Type type) {
  if (isa<FloatType>(type))
    return ScalarClass{true, 0};
  if (isa<IndexType>(type))
    return ScalarClass{false, 64};
  if (auto i = dyn_cast<IntegerType>(type))
    if (i.getWidth() >= 1 && i.getWidth() <= 64)
      return ScalarClass{false, i.getWidth()};
  return std::nullopt;
}

/// The unary float functions, by op name.
static double (*unaryFunction(StringRef name))(double) {
  using Fn = double (*)(double);
  return llvm::StringSwitch<Fn>(name)
      .Case("arith.negf", [](double x) { return -x; })
      .Case("math.absf", [](double x) { return std::fabs(x); })
      .Case("math.exp", [](double x) { return std::exp(x); })
      .Case("math.exp2", [](double x) { return std::exp2(x); })
      .Case("math.expm1", [](double x) { return std::expm1(x); })
      .Case("math.log", [](double x) { return std::log(x); })
      .Case("math.log1p", [](double x) { return std::log1p(x); })
      .Case("math.log2", [](double x) { return std::log2(x); })
      .Case("math.log10", [](double x) { return std::log10(x); })
      .Case("math.tanh", [](double x) { return std::tanh(x); })
      .Case("math.sqrt", [](double x) { return std::sqrt(x); })
      .Case("math.rsqrt", [](double x) { return 1.0 / std::sqrt(x); })
      .Case("math.sin", [](double x) { return std::sin(x); })
      .Case("math.cos", [](double x) { return std::cos(x); })
      .Case("math.tan", [](double x) { return std::tan(x); })
      .Case("math.atan", [](double x) { return std::atan(x); })
      .Case("math.erf", [](double x) { return std::erf(x); })
      .Case("math.erfc", [](double x) { return std::erfc(x); })
      .Case("math.floor", [](double x) { return std::floor(x); })
      .Case("math.ceil", [](double x) { return std::ceil(x); })
      .Case("math.round", [](double x) { return std::round(x); })
      .Case("math.roundeven", [](double x) { return std::nearbyint(x); })
      .Case("math.trunc", [](double x) { return std::trunc(x); })
      .Default(nullptr);
}

/// Binary ops on two operands of one class, by op name.
static std::optional<BodyProgram::Opcode> binaryOpcode(StringRef name, bool &isFloat) {
  using O = BodyProgram::Opcode;
  std::optional<O> f = llvm::StringSwitch<std::optional<O>>(name)
                           .Case("arith.addf", O::AddF)
                           .Case("arith.subf", O::SubF)
                           .Case("arith.mulf", O::MulF)
                           .Case("arith.divf", O::DivF)
                           .Case("arith.remf", O::RemF)
                           .Case("math.powf", O::PowF)
                           .Case("arith.maximumf", O::MaximumF)
                           .Case("arith.minimumf", O::MinimumF)
                           .Case("arith.maxnumf", O::MaxNumF)
                           .Case("arith.minnumf", O::MinNumF)
                           .Default(std::nullopt);
  if (f) {
    isFloat = true;
    return f;
  }
  isFloat = false;
  return llvm::StringSwitch<std::optional<O>>(name)
      .Case("arith.addi", O::AddI)
      .Case("arith.subi", O::SubI)
      .Case("arith.muli", O::MulI)
      .Case("arith.divsi", O::DivSI)
      .Case("arith.floordivsi", O::FloorDivSI)
      .Case("arith.ceildivsi", O::CeilDivSI)
      .Case("arith.remsi", O::RemSI)
      .Case("arith.andi", O::AndI)
      .Case("arith.ori", O::OrI)
      .Case("arith.xori", O::XOrI)
      .Case("arith.maxsi", O::MaxSI)
      .Case("arith.minsi", O::MinSI)
      .Default(std::nullopt);
}

LogicalResult BodyCompiler::compileOp(Operation &op) {
  StringRef name = op.getName().getStringRef();
  auto unsupported = [&]() -> LogicalResult {
    return op.emitError() << "the reference interpreter does not support '" << name
                          << "'";
  };
  if (op.getNumRegions() != 0 || op.getNumResults() != 1 || op.getNumOperands() > 3)
    return unsupported();

  // Operand slots and classes; all must be scalars defined earlier.
  SmallVector<unsigned, 3> in;
  SmallVector<ScalarClass, 3> cls;
  for (Value operand : op.getOperands()) {
    auto it = slots.find(operand);
    std::optional<ScalarClass> c = classify(operand.getType());
    if (it == slots.end() || !c)
      return op.emitError() << "the reference interpreter does not support this use of '"
                            << name << "' (operand of type " << operand.getType() << ")";
    in.push_back(it->second);
    cls.push_back(*c);
  }
  Value result = op.getResult(0);
  std::optional<ScalarClass> rc = classify(result.getType());
  if (!rc)
    return op.emitError() << "the reference interpreter does not support '" << name
                          << "' with a result of type " << result.getType();
  auto operandsAre = [&](unsigned n, bool isFloat) {
    if (in.size() != n)
      return false;
    for (ScalarClass c : cls)
      if (c.isFloat != isFloat)
        return false;
    return true;
  };
  auto badTypes = [&]() -> LogicalResult {
    return op.emitError() << "the reference interpreter does not support '" << name
                          << "' with these operand and result types";
  };

  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    unsigned slot = newSlot(result);
    Attribute value = cst.getValue();
    if (auto f = dyn_cast<FloatAttr>(value); f && rc->isFloat)
      program.initialSlots[slot].f = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(value); i && !rc->isFloat)
      program.initialSlots[slot].i = sext(i.getValue().getZExtValue(), rc->width);
    else
      return badTypes();
    return success();
  }

  if (auto read = dyn_cast<IndexReadOp>(op)) {
    auto compute = read->getParentOfType<ComputeOp>();
    if (rc->isFloat || read.getRead() >= compute.getNumIndexReads())
      return badTypes();
    unsigned res = newSlot(result);
    BodyProgram::Inst &inst = emit(op, Opcode::Index);
    inst.res = res;
    // The values of the index reads follow the dims in the point array.
    inst.imm = static_cast<int64_t>(compute.getNumDims() + read.getRead());
    return success();
  }

  if (auto index = dyn_cast<IndexOp>(op)) {
    auto compute = index->getParentOfType<ComputeOp>();
    if (rc->isFloat || index.getDim() >= compute.getNumDims())
      return badTypes();
    Opcode opcode = Opcode::Index;
    unsigned res = newSlot(result);
    BodyProgram::Inst &inst = emit(op, opcode);
    inst.res = res;
    inst.imm = static_cast<int64_t>(index.getDim());
    return success();
  }

  if (double (*fn)(double) = unaryFunction(name)) {
    if (!operandsAre(1, true) || !rc->isFloat)
      return badTypes();
    unsigned res = newSlot(result);
    BodyProgram::Inst &inst = emit(op, Opcode::UnaryF);
    inst.res = res;
    inst.a = in[0];
    inst.fn = fn;
    return success();
  }

  bool isFloat = false;
  if (std::optional<Opcode> opcode = binaryOpcode(name, isFloat)) {
    if (!operandsAre(2, isFloat) || rc->isFloat != isFloat)
      return badTypes();
    unsigned res = newSlot(result);
    BodyProgram::Inst &inst = emit(op, *opcode);
    inst.res = res;
    inst.a = in[0];
    inst.b = in[1];
    inst.width = rc->width;
    return success();
  }

  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    if (!operandsAre(2, true) || rc->isFloat)
      return badTypes();
    unsigned res = newSlot(result);
    BodyProgram::Inst &inst = emit(op, Opcode::CmpF);
    inst.res = res;
    inst.a = in[0];
    inst.b = in[1];
    inst.predicate = static_cast<uint8_t>(cmp.getPredicate());
    return success();
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    if (!operandsAre(2, false) || rc->isFloat)
      return badTypes();
    unsigned res = newSlot(result);
    BodyProgram::Inst &inst = emit(op, Opcode::CmpI);
    inst.res = res;
    inst.a = in[0];
    inst.b = in[1];
    inst.width = cls[0].width;
    inst.predicate = static_cast<uint8_t>(cmp.getPredicate());
    return success();
  }
  if (isa<arith::SelectOp>(op)) {
    if (in.size() != 3 || cls[0].isFloat || cls[1].isFloat != rc->isFloat ||
        cls[2].isFloat != rc->isFloat)
      return badTypes();
    unsigned res = newSlot(result);
    BodyProgram::Inst &inst = emit(op, Opcode::Select);
    inst.res = res;
    inst.a = in[0];
    inst.b = in[1];
    inst.c = in[2];
    return success();
  }

  // Casts: one operand.
  struct Cast {
    Opcode opcode;
    bool fromFloat, toFloat;
  };
  std::optional<Cast> cast = llvm::StringSwitch<std::optional<Cast>>(name)
                                 .Case("arith.extf", Cast{Opcode::Copy, true, true})
                                 .Case("arith.truncf", Cast{Opcode::Copy, true, true})
                                 .Case("arith.index_cast", Cast{Opcode::SExt, false, false})
                                 .Case("arith.extsi", Cast{Opcode::SExt, false, false})
                                 .Case("arith.trunci", Cast{Opcode::SExt, false, false})
                                 .Case("arith.index_castui", Cast{Opcode::ZExt, false, false})
                                 .Case("arith.extui", Cast{Opcode::ZExt, false, false})
                                 .Case("arith.sitofp", Cast{Opcode::SIToFP, false, true})
                                 .Case("arith.uitofp", Cast{Opcode::UIToFP, false, true})
                                 .Case("arith.fptosi", Cast{Opcode::FPToSI, true, false})
                                 .Default(std::nullopt);
  if (cast) {
    if (!operandsAre(1, cast->fromFloat) || rc->isFloat != cast->toFloat)
      return badTypes();
    unsigned res = newSlot(result);
    BodyProgram::Inst &inst = emit(op, cast->opcode);
    inst.res = res;
    inst.a = in[0];
    inst.width = rc->width;
    inst.srcWidth = cls[0].width;
    return success();
  }
  return unsupported();
}

LogicalResult BodyCompiler::compile(ComputeOp op) {
  Region &region = op.getBody();
  if (!region.hasOneBlock())
    return op.emitError("the reference interpreter expects a body of one block");
  Block &block = region.front();
  if (block.getNumArguments() != op.getInputs().size())
    return op.emitError("the reference interpreter expects one body argument per read");
  for (BlockArgument arg : block.getArguments()) {
    if (!isa<FloatType>(arg.getType()))
      return op.emitError("the reference interpreter expects float body arguments");
    newSlot(arg);
  }
  if (block.empty())
    return op.emitError("the reference interpreter expects a body ending in neo.yield");
  for (Operation &inner : block.without_terminator())
    if (failed(compileOp(inner)))
      return failure();
  Operation *terminator = &block.back();
  auto yield = dyn_cast<YieldOp>(terminator);
  if (!yield) {
    if (terminator->hasTrait<OpTrait::IsTerminator>())
      return terminator->emitError()
             << "the reference interpreter does not support '" << terminator->getName()
             << "'";
    // The last op is a regular op: the block has no terminator.
    if (failed(compileOp(*terminator)))
      return failure();
    return op.emitError("the reference interpreter expects a body ending in neo.yield");
  }
  if (yield.getValues().size() != 1)
    return yield.emitError("the reference interpreter expects neo.yield of one value");
  Value yielded = yield.getValues()[0];
  auto it = slots.find(yielded);
  if (it == slots.end() || !isa<FloatType>(yielded.getType()))
    return yield.emitError("the reference interpreter expects neo.yield of a float "
                           "value defined in the body");
  program.yieldSlot = it->second;
  return success();
}

FailureOr<BodyProgram> BodyProgram::compile(ComputeOp op) {
  BodyProgram program;
  BodyCompiler compiler(program);
  if (failed(compiler.compile(op)))
    return failure();
  return program;
}
