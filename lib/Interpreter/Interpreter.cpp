//===- Interpreter.cpp - Reference interpreter of neo IR ------------------===//
//
// Evaluates func.func bodies of neo ops in double precision, straight from the
// semantics of neo.compute (see NeoOps.td): an odometer over the parallel then
// reduction dims, the domain test, padded reads, the body, the combination by
// the reduction kind into output elements that start at the kind's identity.
//
//===----------------------------------------------------------------------===//
#include "neo/Interpreter/Interpreter.h"

#include "BodyProgram.h"

#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::detail;

namespace {

/// Iteration spaces larger than this are refused.
constexpr uint64_t kMaxIterationPoints = uint64_t(1) << 40;

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

/// The number of elements of `shape`, or nullopt if a dim is negative or the
/// count overflows.
std::optional<uint64_t> numElements(ArrayRef<int64_t> shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
      return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

class Interpreter {
public:
  explicit Interpreter(ModuleOp module) : module(module) {}

  /// Evaluates `func` on `args`; errors in `args` are reported at `loc`.
  FailureOr<std::vector<RefTensor>> callFunction(func::FuncOp func,
                                                 std::vector<RefTensor> args,
                                                 Location loc);

private:
  using Env = llvm::DenseMap<Value, RefTensor>;

  /// Evaluates the ops of `block` with its arguments bound to `args` and
  /// returns the operands of its terminator (func.return in a function body,
  /// neo.return in a neo.fused body).
  FailureOr<std::vector<RefTensor>> evalBlock(Block &block, std::vector<RefTensor> args,
                                              bool isFunctionBody);
  LogicalResult evalOp(Operation &op, Env &env);
  FailureOr<RefTensor> evalCompute(ComputeOp op, Env &env);
  FailureOr<RefTensor> evalConstant(ConstantOp op);
  FailureOr<std::vector<RefTensor>> evalInvertIndex(InvertIndexOp op, Env &env);
  /// The tensors bound to `values`.
  FailureOr<std::vector<RefTensor>> lookup(Operation &user, ValueRange values,
                                           Env &env);

  ModuleOp module;
  /// Functions being evaluated, to refuse recursion.
  llvm::SmallPtrSet<Operation *, 8> active;
};

} // namespace

FailureOr<std::vector<RefTensor>>
Interpreter::callFunction(func::FuncOp func, std::vector<RefTensor> args, Location loc) {
  StringRef name = func.getSymName();
  if (func.isExternal())
    return emitError(loc) << "function '@" << name
                          << "' has no body to interpret (it is a declaration)";
  FunctionType type = func.getFunctionType();
  if (args.size() != type.getNumInputs())
    return emitError(loc) << "function '@" << name << "' takes " << type.getNumInputs()
                          << " inputs but " << args.size() << " were given";
  for (auto [i, arg] : llvm::enumerate(args)) {
    auto tensorType = dyn_cast<RankedTensorType>(type.getInput(i));
    if (!tensorType || !tensorType.hasStaticShape())
      return emitError(loc) << "argument #" << i << " of '@" << name << "' has type "
                            << type.getInput(i)
                            << ", but the reference interpreter supports only "
                               "statically shaped tensors";
    if (ArrayRef<int64_t>(arg.shape) != tensorType.getShape())
      return emitError(loc) << "input #" << i << " of '@" << name << "' has shape "
                            << formatShape(arg.shape) << " but the argument is of type "
                            << tensorType;
    std::optional<uint64_t> n = numElements(arg.shape);
    if (!n || *n != arg.data.size())
      return emitError(loc) << "input #" << i << " of '@" << name << "' has "
                            << arg.data.size() << " elements but its shape "
                            << formatShape(arg.shape) << " needs "
                            << (n ? std::to_string(*n) : std::string("too many"));
  }
  for (auto [i, arg] : llvm::enumerate(args)) {
    auto tensorType = cast<RankedTensorType>(type.getInput(i));
    if (!isa<IntegerType>(tensorType.getElementType()))
      continue;
    for (auto [k, v] : llvm::enumerate(arg.data))
      if (v != std::floor(v) || v < static_cast<double>(kIndexReadRange.lo) ||
          v > static_cast<double>(kIndexReadRange.hi))
        return emitError(loc) << "input #" << i << " of '@" << name << "' is an index tensor ("
                              << tensorType << ") but element " << k << " is " << v
                              << ": index values are integers in [-2^31, 2^31 - 1]";
  }
  if (!active.insert(func).second)
    return emitError(loc) << "recursive call of '@" << name
                          << "' is not supported by the reference interpreter";
  Region &body = func.getBody();
  FailureOr<std::vector<RefTensor>> results;
  if (!body.hasOneBlock())
    results = func.emitError()
              << "the reference interpreter supports only functions of one block";
  else
    results = evalBlock(body.front(), std::move(args), /*isFunctionBody=*/true);
  active.erase(func);
  if (failed(results))
    return failure();
  if (results->size() != type.getNumResults())
    return func.emitError() << "function '@" << name << "' returns " << results->size()
                            << " values but its type has " << type.getNumResults()
                            << " results";
  return results;
}

FailureOr<std::vector<RefTensor>> Interpreter::lookup(Operation &user, ValueRange values,
                                                      Env &env) {
  std::vector<RefTensor> tensors;
  tensors.reserve(values.size());
  for (Value v : values) {
    auto it = env.find(v);
    if (it == env.end())
      return user.emitError()
             << "the reference interpreter has no value for an operand of '"
             << user.getName() << "' (not defined earlier in the same block)";
    tensors.push_back(it->second);
  }
  return tensors;
}

FailureOr<std::vector<RefTensor>>
Interpreter::evalBlock(Block &block, std::vector<RefTensor> args, bool isFunctionBody) {
  Env env;
  for (auto [arg, tensor] : llvm::zip(block.getArguments(), args))
    env[arg] = std::move(tensor);
  for (Operation &op : block) {
    bool isReturn = isFunctionBody ? isa<func::ReturnOp>(op) : isa<ReturnOp>(op);
    if (isReturn) {
      if (&op != &block.back())
        return op.emitError("the reference interpreter expects a return at the end of "
                            "its block");
      return lookup(op, op.getOperands(), env);
    }
    if (failed(evalOp(op, env)))
      return failure();
  }
  Operation *parent = block.getParentOp();
  return parent->emitError() << "the reference interpreter expects the body of '"
                             << parent->getName() << "' to end in "
                             << (isFunctionBody ? "func.return" : "neo.return");
}

LogicalResult Interpreter::evalOp(Operation &op, Env &env) {
  std::vector<RefTensor> results;
  if (auto compute = dyn_cast<ComputeOp>(op)) {
    FailureOr<RefTensor> r = evalCompute(compute, env);
    if (failed(r))
      return failure();
    results.push_back(std::move(*r));
  } else if (auto constant = dyn_cast<ConstantOp>(op)) {
    FailureOr<RefTensor> r = evalConstant(constant);
    if (failed(r))
      return failure();
    results.push_back(std::move(*r));
  } else if (auto invert = dyn_cast<InvertIndexOp>(op)) {
    FailureOr<std::vector<RefTensor>> r = evalInvertIndex(invert, env);
    if (failed(r))
      return failure();
    results = std::move(*r);
  } else if (auto fused = dyn_cast<FusedOp>(op)) {
    FailureOr<std::vector<RefTensor>> ins = lookup(op, fused.getInputs(), env);
    if (failed(ins))
      return failure();
    Region &body = fused.getBody();
    if (!body.hasOneBlock() || body.front().getNumArguments() != ins->size())
      return op.emitError("the reference interpreter expects a neo.fused body of one "
                          "block with one argument per operand");
    FailureOr<std::vector<RefTensor>> r =
        evalBlock(body.front(), std::move(*ins), /*isFunctionBody=*/false);
    if (failed(r))
      return failure();
    results = std::move(*r);
  } else if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
    if (!callee)
      return op.emitError() << "no function '@" << call.getCallee()
                            << "' in the module";
    FailureOr<std::vector<RefTensor>> ins = lookup(op, call.getOperands(), env);
    if (failed(ins))
      return failure();
    FailureOr<std::vector<RefTensor>> r =
        callFunction(callee, std::move(*ins), op.getLoc());
    if (failed(r))
      return failure();
    results = std::move(*r);
  } else {
    return op.emitError() << "the reference interpreter does not support '"
                          << op.getName() << "'";
  }

  // Every result must be what its type says.
  if (results.size() != op.getNumResults())
    return op.emitError() << "the reference interpreter computed " << results.size()
                          << " values for " << op.getNumResults() << " results";
  for (auto [i, value] : llvm::enumerate(op.getResults())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || ArrayRef<int64_t>(results[i].shape) != type.getShape())
      return op.emitError() << "the reference interpreter computed a value of shape "
                            << formatShape(results[i].shape) << " for result #" << i
                            << " of type " << value.getType();
    env[value] = std::move(results[i]);
  }
  return success();
}

FailureOr<RefTensor> Interpreter::evalConstant(ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  auto type = dyn_cast<RankedTensorType>(op.getResult().getType());
  if (!dense || !type || !isa<FloatType>(dense.getElementType()))
    return op.emitError("the reference interpreter supports only neo.constant of "
                        "dense float elements");
  RefTensor t;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.data.reserve(dense.getNumElements());
  for (const APFloat &v : dense.getValues<APFloat>())
    t.data.push_back(v.convertToDouble());
  return t;
}

/// neo.invert_index, written from its definition: the kept positions (those
/// in a segment, when there are segments, whose value lies in [0, J)) sorted
/// by value, stably.
FailureOr<std::vector<RefTensor>> Interpreter::evalInvertIndex(InvertIndexOp op, Env &env) {
  FailureOr<std::vector<RefTensor>> ins = lookup(*op.getOperation(), op->getOperands(), env);
  if (failed(ins))
    return failure();
  // Without values, each position's value is the position itself.
  const std::vector<double> *values = op.getValues() ? &(*ins)[0].data : nullptr;
  int64_t n = op.getNumPositions(), extent = op.getExtent();
  // The kept (value, position, owner) in position order.
  struct Entry {
    int64_t value, position, owner;
  };
  std::vector<Entry> kept;
  auto keep = [&](int64_t e, int64_t owner) {
    int64_t v = values ? static_cast<int64_t>((*values)[e]) : e;
    if (v >= 0 && v < extent)
      kept.push_back({v, e, owner});
  };
  if (op.getSegments()) {
    const std::vector<double> &seg = ins->back().data;
    int64_t end = 0;
    for (size_t i = 0; i + 1 < seg.size(); ++i) {
      int64_t lo = std::clamp<int64_t>(static_cast<int64_t>(seg[i]), end, n);
      int64_t hi = std::clamp<int64_t>(static_cast<int64_t>(seg[i + 1]), lo, n);
      for (int64_t e = lo; e < hi; ++e)
        keep(e, static_cast<int64_t>(i));
      end = hi;
    }
  } else {
    for (int64_t e = 0; e < n; ++e)
      keep(e, 0);
  }
  std::stable_sort(kept.begin(), kept.end(),
                   [](const Entry &a, const Entry &b) { return a.value < b.value; });
  std::vector<RefTensor> results(op.getOwners() ? 3 : 2);
  results[0].shape = {extent + 1};
  results[0].data.assign(extent + 1, 0.0);
  for (const Entry &k : kept)
    results[0].data[k.value + 1] += 1;
  for (int64_t v = 1; v <= extent; ++v)
    results[0].data[v] += results[0].data[v - 1];
  for (size_t r = 1; r < results.size(); ++r) {
    results[r].shape = {n};
    results[r].data.assign(n, 0.0);
  }
  for (auto [t, k] : llvm::enumerate(kept)) {
    results[1].data[t] = static_cast<double>(k.position);
    if (op.getOwners())
      results[2].data[t] = static_cast<double>(k.owner);
  }
  return results;
}

/// A read of a neo.compute, precompiled.
namespace {
struct Read {
  const RefTensor *tensor;
  SmallVector<AffineProgram> indices;
  SmallVector<int64_t> strides;
  double pad;
  bool checked; // an index outside the tensor is an error, not a pad read
  // For messages: "read #i" / "index read #j", and the name of its map.
  std::string name, mapName;
};
struct Constraint {
  AffineProgram expr;
  bool isEq;
};
} // namespace

FailureOr<RefTensor> Interpreter::evalCompute(ComputeOp op, Env &env) {
  SmallVector<int64_t> bounds = op.getIterationBounds();
  unsigned numParallel = op.getNumParallelDims(), numDims = bounds.size();
  auto resultType = dyn_cast<RankedTensorType>(op.getResult().getType());
  if (!resultType || resultType.getShape() != ArrayRef<int64_t>(bounds).take_front(numParallel))
    return op.emitError() << "the reference interpreter expects a result of shape "
                          << formatShape(ArrayRef<int64_t>(bounds).take_front(numParallel));

  // The size of the iteration space.
  uint64_t numPoints = 1;
  bool empty = false;
  for (int64_t b : bounds) {
    if (b < 0)
      return op.emitError() << "negative iteration bound " << b;
    if (b == 0)
      empty = true;
  }
  if (!empty) {
    for (int64_t b : bounds) {
      if (static_cast<uint64_t>(b) > kMaxIterationPoints / numPoints)
        return op.emitError() << "the iteration space " << formatShape(bounds)
                              << " has more than 2^40 points, too many for the "
                                 "reference interpreter";
      numPoints *= static_cast<uint64_t>(b);
    }
  } else {
    numPoints = 0;
  }

  // Reads.
  unsigned numReads = op.getInputs().size();
  unsigned numSymbols = op.getNumIndexReads();
  if (op.getIndexingMaps().size() != numReads)
    return op.emitError("the reference interpreter expects one indexing map per read");
  if (auto pads = op.getPadValuesAttr(); pads && pads.size() != numReads)
    return op.emitError("the reference interpreter expects one pad value per read");
  std::vector<Read> reads;
  reads.reserve(numReads);
  for (unsigned i = 0; i < numReads; ++i) {
    auto it = env.find(op.getInputs()[i]);
    if (it == env.end())
      return op.emitError() << "the reference interpreter has no value for read #" << i;
    AffineMap map = op.getIndexingMap(i);
    const RefTensor &tensor = it->second;
    if ((map.getNumSymbols() != 0 && map.getNumSymbols() != numSymbols) ||
        map.getNumDims() != numDims || map.getNumResults() != tensor.shape.size())
      return op.emitError() << "the reference interpreter expects indexing map #" << i
                            << " to have " << numDims << " dims, " << numSymbols
                            << " or no symbols and " << tensor.shape.size() << " results";
    Read read{&tensor,
              {},
              stridesOf(tensor.shape),
              op.getPadValue(i),
              op.isCheckedRead(i),
              "read #" + std::to_string(i),
              "indexing map #" + std::to_string(i)};
    for (AffineExpr e : map.getResults())
      read.indices.emplace_back(e, numDims);
    reads.push_back(std::move(read));
  }
  // Index reads: their values follow the dims in the point array.
  std::vector<Read> indexReads;
  for (unsigned j = 0; j < numSymbols; ++j) {
    auto it = env.find(op.getIndexInputs()[j]);
    if (it == env.end())
      return op.emitError() << "the reference interpreter has no value for index read #" << j;
    const RefTensor &tensor = it->second;
    AffineMap map = op.getIndexMap(j);
    if (map.getNumDims() != numDims || map.getNumResults() != tensor.shape.size())
      return op.emitError() << "the reference interpreter expects index map #" << j << " to have "
                            << numDims << " dims and " << tensor.shape.size() << " results";
    Read read{&tensor,
              {},
              stridesOf(tensor.shape),
              0.0,
              true,
              "index read #" + std::to_string(j),
              "index map #" + std::to_string(j)};
    for (AffineExpr e : map.getResults())
      read.indices.emplace_back(e, numDims);
    indexReads.push_back(std::move(read));
  }

  // Domain.
  SmallVector<Constraint, 4> constraints;
  if (std::optional<IntegerSet> domain = op.getDomain()) {
    if ((domain->getNumSymbols() != 0 && domain->getNumSymbols() != numSymbols) ||
        domain->getNumDims() != numDims)
      return op.emitError() << "the reference interpreter expects a domain over " << numDims
                            << " dims and " << numSymbols << " or no symbols";
    for (unsigned c = 0, e = domain->getNumConstraints(); c < e; ++c)
      constraints.push_back({AffineProgram(domain->getConstraint(c), numDims), domain->isEq(c)});
  }

  // Reduction dims ranged by index values: 0 <= lower <= upper <= extent.
  struct Range {
    unsigned dim;
    AffineProgram lower, upper;
  };
  SmallVector<Range, 2> ranges;
  for (const DataDependentRange &r : getDataDependentRanges(op))
    ranges.push_back({r.dim, AffineProgram(r.lower, numDims), AffineProgram(r.upper, numDims)});

  FailureOr<BodyProgram> body = BodyProgram::compile(op);
  if (failed(body))
    return failure();

  ReductionKind kind = op.getKind();
  RefTensor out;
  out.shape.assign(bounds.begin(), bounds.begin() + numParallel);
  std::optional<uint64_t> numOut = numElements(out.shape);
  if (!numOut || *numOut > kMaxIterationPoints)
    return op.emitError("the result is too large for the reference interpreter");
  out.data.assign(*numOut, ComputeOp::getIdentity(kind));
  SmallVector<int64_t> outStrides = stridesOf(out.shape);

  std::vector<Slot> slots = body->makeSlots();
  // The iteration point, then the values of the index reads.
  SmallVector<int64_t> d(numDims + numSymbols, 0);
  auto printPoint = [&](InFlightDiagnostic &diag) {
    diag << "at iteration point (";
    llvm::interleaveComma(ArrayRef<int64_t>(d).take_front(numDims), diag);
    diag << ")";
  };
  auto divisionByZero = [&](StringRef where) {
    InFlightDiagnostic diag = op.emitError();
    diag << "division by zero in " << where << " ";
    printPoint(diag);
    return failure();
  };
  // The offset of `read` at the current point, or nullopt (with `bad` the
  // index that left the tensor) when it is outside.
  auto offsetOf = [&](const Read &read, unsigned &bad,
                      int64_t &badValue) -> FailureOr<std::optional<int64_t>> {
    int64_t offset = 0;
    for (unsigned k = 0, e = read.indices.size(); k < e; ++k) {
      int64_t idx;
      if (!read.indices[k].eval(d.data(), idx))
        return divisionByZero(read.mapName);
      if (idx < 0 || idx >= read.tensor->shape[k]) {
        bad = k;
        badValue = idx;
        return std::optional<int64_t>();
      }
      offset += idx * read.strides[k];
    }
    return std::optional<int64_t>(offset);
  };
  auto outOfRange = [&](const Read &read, unsigned k, int64_t value) {
    InFlightDiagnostic diag = op.emitError();
    diag << "index out of range: index #" << k << " of " << read.name << " is " << value
         << " but the dim has size " << read.tensor->shape[k] << " ";
    printPoint(diag);
    return failure();
  };

  for (uint64_t point = 0; point < numPoints; ++point) {
    for (unsigned j = 0; j < numSymbols; ++j) {
      unsigned bad = 0;
      int64_t badValue = 0;
      FailureOr<std::optional<int64_t>> offset = offsetOf(indexReads[j], bad, badValue);
      if (failed(offset))
        return failure();
      if (!*offset)
        return outOfRange(indexReads[j], bad, badValue);
      d[numDims + j] = static_cast<int64_t>(indexReads[j].tensor->data[**offset]);
    }
    for (const Range &r : ranges) {
      int64_t lo, hi;
      if (!r.lower.eval(d.data(), lo) || !r.upper.eval(d.data(), hi))
        return divisionByZero("a range bound");
      if (lo < 0 || hi > bounds[r.dim] || lo > hi) {
        InFlightDiagnostic diag = op.emitError();
        diag << "index out of range: the range of d" << r.dim << " is [" << lo << ", " << hi
             << ") but it must lie in [0, " << bounds[r.dim] << "] with lower <= upper ";
        printPoint(diag);
        return failure();
      }
    }
    bool inDomain = true;
    for (const Constraint &c : constraints) {
      int64_t v;
      if (!c.expr.eval(d.data(), v))
        return divisionByZero("the domain");
      if (c.isEq ? v != 0 : v < 0) {
        inDomain = false;
        break;
      }
    }
    if (inDomain) {
      for (unsigned i = 0; i < numReads; ++i) {
        const Read &read = reads[i];
        unsigned bad = 0;
        int64_t badValue = 0;
        FailureOr<std::optional<int64_t>> offset = offsetOf(read, bad, badValue);
        if (failed(offset))
          return failure();
        if (!*offset && read.checked)
          return outOfRange(read, bad, badValue);
        slots[i].f = *offset ? read.tensor->data[**offset] : read.pad;
      }
      double v;
      unsigned failedInst;
      Trap trap = body->run(slots.data(), d.data(), v, failedInst);
      if (trap != Trap::None) {
        body->reportTrap(trap, failedInst, ArrayRef<int64_t>(d).take_front(numDims));
        return failure();
      }
      int64_t o = 0;
      for (unsigned k = 0; k < numParallel; ++k)
        o += d[k] * outStrides[k];
      double &acc = out.data[o];
      switch (kind) {
      case ReductionKind::None:
        acc = v;
        break;
      case ReductionKind::Sum:
        acc += v;
        break;
      case ReductionKind::Prod:
        acc *= v;
        break;
      case ReductionKind::Max:
        acc = maximumF(acc, v);
        break;
      case ReductionKind::Min:
        acc = minimumF(acc, v);
        break;
      }
    }
    // Advance the odometer (last dim fastest).
    for (int k = static_cast<int>(numDims) - 1; k >= 0; --k) {
      if (++d[k] < bounds[k])
        break;
      d[k] = 0;
    }
  }
  return out;
}

FailureOr<std::vector<RefTensor>> mlir::neo::interpret(ModuleOp module,
                                                       llvm::StringRef name,
                                                       llvm::ArrayRef<RefTensor> inputs) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func)
    return emitError(module.getLoc()) << "no function named '@" << name
                                      << "' in the module";
  Interpreter interpreter(module);
  return interpreter.callFunction(func, std::vector<RefTensor>(inputs.begin(), inputs.end()),
                                  module.getLoc());
}
