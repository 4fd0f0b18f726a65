//===- TunableOps.cpp - The ops of a program that neo-tune explores -------===//
#include "neo/Tuning/Measure/TunableOps.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"

#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::tune;

/// `func.func @kernel(reads...) -> result` computing `ops` (in program
/// order; the last is the result), with `argTypes` for the reads from
/// outside (their own types when empty).
static OwningOpRef<ModuleOp> groupModule(ArrayRef<ComputeOp> ops, ArrayRef<Type> argTypes = {}) {
  ComputeOp root = ops.back();
  MLIRContext *ctx = root.getContext();
  Location loc = root.getLoc();
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  llvm::SmallPtrSet<Operation *, 8> inside;
  for (ComputeOp op : ops)
    inside.insert(op);
  llvm::SetVector<Value> reads;
  for (ComputeOp op : ops)
    for (Value v : op->getOperands())
      if (!inside.contains(v.getDefiningOp()))
        reads.insert(v);
  SmallVector<Type> types(argTypes.begin(), argTypes.end());
  if (types.empty())
    for (Value v : reads)
      types.push_back(v.getType());
  b.setInsertionPointToEnd(module->getBody());
  auto func =
      func::FuncOp::create(b, loc, "kernel", b.getFunctionType(types, root.getResult().getType()));
  Block *entry = func.addEntryBlock();
  IRMapping map;
  for (auto [i, v] : llvm::enumerate(reads))
    map.map(v, entry->getArgument(i));
  b.setInsertionPointToStart(entry);
  for (ComputeOp op : ops)
    b.clone(*op, map);
  func::ReturnOp::create(b, loc, map.lookup(root.getResult()));
  return module;
}

/// `op` and, transitively, the neo.compute producers of its reads that the
/// pipeline's elementwise fusion may fold into it (no reduction dims, one
/// use, no schedule of their own), in program order.
static SmallVector<ComputeOp> fusionGroup(ComputeOp root) {
  llvm::SetVector<Operation *> members;
  members.insert(root);
  SmallVector<ComputeOp> worklist = {root};
  while (!worklist.empty()) {
    ComputeOp c = worklist.pop_back_val();
    for (Value v : c.getInputs()) {
      auto p = v.getDefiningOp<ComputeOp>();
      if (!p || members.contains(p) || p.getNumReductionDims() != 0 || !v.hasOneUse() ||
          p->hasAttr(kScheduleAttrName) || p->getBlock() != root->getBlock())
        continue;
      members.insert(p);
      worklist.push_back(p);
    }
  }
  SmallVector<ComputeOp> ops;
  for (Operation *op : members)
    ops.push_back(cast<ComputeOp>(op));
  llvm::sort(ops, [](ComputeOp a, ComputeOp b) { return a->isBeforeInBlock(b); });
  return ops;
}

/// The keys of the ops neo-tile schedules in `module` lowered with `options`
/// (fills left out).
static std::vector<TunableOp> scheduledOps(ModuleOp module, const CpuPipelineOptions &options) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  buildNeoLowerToCpuPipeline(pm, options);
  std::vector<TunableOp> out;
  if (failed(pm.run(*copy)))
    return out;
  copy->walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kScheduleAttrName) || isa<linalg::FillOp>(op))
      return;
    if (std::optional<TunableOp> t = analyzeTunable(op, options.implicitGemm))
      out.push_back(std::move(*t));
  });
  return out;
}

/// The last neo.compute of `module` (the result of a group module).
static ComputeOp findCompute(ModuleOp module) {
  ComputeOp found;
  module.walk([&](ComputeOp op) { found = op; });
  return found;
}

/// Lowers a copy of a single-op module to bufferized linalg and analyzes the
/// linalg op the neo.compute became (marked through neo.schedule).
static std::optional<TunableOp> analyzeLowered(ModuleOp single, const CpuPipelineOptions &options) {
  OwningOpRef<ModuleOp> copy = single.clone();
  MLIRContext *ctx = single.getContext();
  findCompute(*copy)->setAttr(kScheduleAttrName, DictionaryAttr::get(ctx));
  PassManager pm(ctx);
  buildNeoLowerToCpuPipeline(pm, options);
  if (failed(pm.run(*copy)))
    return std::nullopt;
  std::optional<TunableOp> tunable;
  copy->walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kScheduleAttrName))
      tunable = analyzeTunable(op, options.implicitGemm);
  });
  return tunable;
}

FailureOr<Discovery> tune::findTunableOps(ModuleOp module, StringRef function,
                                          const std::string &pipelineOptions, std::string &error) {
  MLIRContext *ctx = module.getContext();
  std::string optionErrors;
  llvm::raw_string_ostream optionOS(optionErrors);
  auto options = std::make_unique<CpuPipelineOptions>();
  if (failed(options->parseFromString(pipelineOptions, optionOS))) {
    error = "invalid --pipeline-options '" + pipelineOptions + "': " + optionErrors;
    return failure();
  }
  options->stopAfter = "bufferize";

  // The ops as the pipeline sees them.
  OwningOpRef<ModuleOp> program = module.clone();
  {
    PassManager pm(ctx);
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    if (failed(pm.run(*program))) {
      error = "cannot canonicalize the program";
      return failure();
    }
    inlineFusedOps(*program);
  }

  // The keys of the ops that neo-tile schedules in the compiled program.
  auto selected = [&](func::FuncOp func) {
    return !func.isExternal() &&
           (function.empty() ? !func.isPrivate() : func.getName() == function);
  };
  llvm::StringSet<> programKeys;
  std::vector<std::string> programKeyOrder;
  {
    OwningOpRef<ModuleOp> lowered = program->clone();
    PassManager pm(ctx);
    buildNeoLowerToCpuPipeline(pm, *options);
    if (failed(pm.run(*lowered))) {
      error = "the program does not lower to the CPU";
      return failure();
    }
    for (auto func : lowered->getOps<func::FuncOp>()) {
      if (!selected(func))
        continue;
      func.walk([&](linalg::LinalgOp op) {
        // Fills are the lowering's initializations, not ops of the program.
        if (op->hasAttr(kScheduleAttrName) || isa<linalg::FillOp>(op))
          return;
        if (std::optional<TunableOp> t = analyzeTunable(op, options->implicitGemm))
          if (programKeys.insert(t->key).second)
            programKeyOrder.push_back(t->key);
      });
    }
  }

  Discovery discovery;
  std::vector<OpTask> &tasks = discovery.tasks;
  llvm::StringSet<> fusedKeys;
  bool foundFunction = function.empty();
  // Ops that do not lower alone are skipped without noise.
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
  for (auto func : program->getOps<func::FuncOp>()) {
    if (!selected(func))
      continue;
    foundFunction = true;
    func.walk([&](ComputeOp op) {
      if (op->hasAttr(kScheduleAttrName))
        return;
      OwningOpRef<ModuleOp> single = groupModule({op});
      std::optional<TunableOp> tunable = analyzeLowered(*single, *options);
      if (!tunable)
        return;
      if (!programKeys.contains(tunable->key)) {
        if (fusedKeys.insert(tunable->key).second)
          ++discovery.fusedAway;
        return;
      }
      for (OpTask &t : tasks) {
        if (t.tunable.key == tunable->key) {
          ++t.occurrences;
          return;
        }
      }
      OpTask task;
      task.op = findCompute(*single);
      task.module = std::move(single);
      task.tunable = std::move(*tunable);
      task.function = func.getName().str();
      OpCost cost = countOpCost(task.op);
      task.flops = cost.flops();
      task.points = cost.visited;
      tasks.push_back(std::move(task));
    });
  }
  if (!foundFunction) {
    error = "no function named '" + function.str() + "'";
    return failure();
  }

  // Fused kernels: an op with the elementwise producers folded into it.
  llvm::StringSet<> covered;
  for (const OpTask &t : tasks)
    covered.insert(t.tunable.key);
  if (llvm::any_of(programKeyOrder, [&](const std::string &k) { return !covered.contains(k); })) {
    for (auto func : program->getOps<func::FuncOp>()) {
      if (!selected(func))
        continue;
      func.walk([&](ComputeOp op) {
        if (op->hasAttr(kScheduleAttrName) || op.getNumReductionDims() != 0)
          return;
        SmallVector<ComputeOp> group = fusionGroup(op);
        if (group.size() < 2)
          return;
        OwningOpRef<ModuleOp> module = groupModule(group);
        for (TunableOp &t : scheduledOps(*module, *options)) {
          if (!programKeys.contains(t.key))
            continue;
          auto existing = llvm::find_if(tasks, [&](const OpTask &task) {
            return task.numOps > 1 && task.tunable.key == t.key;
          });
          if (existing != tasks.end()) {
            ++existing->occurrences;
            return;
          }
          if (covered.contains(t.key))
            continue;
          covered.insert(t.key);
          OpTask task;
          task.op = findCompute(*module);
          task.numOps = group.size();
          for (ComputeOp member : group) {
            OpCost cost = countOpCost(member);
            task.flops += cost.flops();
            task.points += cost.visited;
          }
          task.module = std::move(module);
          task.tunable = std::move(t);
          task.function = func.getName().str();
          tasks.push_back(std::move(task));
          return;
        }
      });
    }
  }
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const OpTask &a, const OpTask &b) { return a.flops > b.flops; });
  for (const std::string &key : programKeyOrder)
    if (llvm::none_of(tasks, [&](const OpTask &t) { return t.tunable.key == key; }))
      discovery.uncovered.push_back(key);
  return discovery;
}

OwningOpRef<ModuleOp> tune::reduceForVerification(const OpTask &task, double maxPoints,
                                                  SmallVectorImpl<int64_t> &shape) {
  ComputeOp op = task.op;
  SmallVector<int64_t> bounds = op.getIterationBounds();
  unsigned numParallel = op.getNumParallelDims();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Consistent cuts need reads that are plain projections over whole dims,
  // each operand read once, and no domain.
  bool consistent = !op.getDomainAttr();
  llvm::SmallPtrSet<void *, 8> seen;
  for (auto [i, operand] : llvm::enumerate(op.getInputs())) {
    if (!seen.insert(operand.getAsOpaquePointer()).second)
      consistent = false;
    auto type = cast<RankedTensorType>(operand.getType());
    for (auto [j, e] : llvm::enumerate(maps[i].getResults())) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d || type.getDimSize(j) != bounds[d.getPosition()])
        consistent = false;
    }
  }
  SmallVector<int64_t> reduced = bounds;
  auto points = [&] {
    double p = 1;
    for (int64_t b : reduced)
      p *= double(b);
    return p;
  };
  while (points() > maxPoints) {
    int largest = -1;
    for (unsigned d = 0; d < reduced.size(); ++d)
      if ((consistent || d < numParallel) && reduced[d] > 1 &&
          (largest < 0 || reduced[d] > reduced[largest]))
        largest = d;
    if (largest < 0)
      return nullptr;
    reduced[largest] = std::max<int64_t>(1, reduced[largest] * 3 / 4);
  }
  shape.assign(reduced.begin(), reduced.end());

  SmallVector<Type> argTypes;
  llvm::SetVector<Value> reads(op->operand_begin(), op->operand_end());
  for (Value v : reads) {
    auto type = cast<RankedTensorType>(v.getType());
    if (!consistent) {
      argTypes.push_back(type);
      continue;
    }
    unsigned i = llvm::find(op.getInputs(), v) - op.getInputs().begin();
    SmallVector<int64_t> dims;
    for (AffineExpr e : maps[i].getResults())
      dims.push_back(reduced[cast<AffineDimExpr>(e).getPosition()]);
    argTypes.push_back(RankedTensorType::get(dims, type.getElementType()));
  }
  OwningOpRef<ModuleOp> module = groupModule({op}, argTypes);
  ComputeOp small = findCompute(*module);
  Builder b(op.getContext());
  small.setBoundsAttr(b.getDenseI64ArrayAttr(ArrayRef<int64_t>(reduced).take_front(numParallel)));
  small.setReductionBoundsAttr(
      b.getDenseI64ArrayAttr(ArrayRef<int64_t>(reduced).drop_front(numParallel)));
  auto resultType = RankedTensorType::get(ArrayRef<int64_t>(reduced).take_front(numParallel),
                                          op.getResultType().getElementType());
  small.getResult().setType(resultType);
  module->walk([&](func::FuncOp f) { f.setFunctionType(b.getFunctionType(argTypes, resultType)); });
  ScopedDiagnosticHandler quiet(op.getContext(), [](Diagnostic &) { return success(); });
  if (failed(verify(*module)))
    return nullptr;
  return module;
}
