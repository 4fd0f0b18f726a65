//===- Measure.cpp - Timing and checking candidate schedules --------------===//
#include "neo/Tuning/Measure/Measure.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"

#include "neo/Interpreter/Interpreter.h"
#include "neo/Runtime/Support/Tolerance.h"
#include "neo/Support/FileIO.h"
#include "neo/Tuning/TuningRecords.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::tune;
using namespace mlir::neo::runtime;

static constexpr llvm::StringLiteral kKernel = "kernel";

static double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Random inputs in [-1, 1) and outputs for the kernel of `module`.
struct KernelBuffers {
  std::vector<HostTensor> inputs, outputs;
  std::vector<HostBuffer> in, out;

  llvm::Error allocate(ModuleOp module, uint64_t seed) {
    auto signatures = getSignatures(module);
    if (!signatures)
      return signatures.takeError();
    const FunctionSignature &sig = signatures->front();
    std::mt19937_64 rng(seed);
    for (const TensorSpec &spec : sig.inputs) {
      auto t = HostTensor::allocate(spec, "an input");
      if (!t)
        return t.takeError();
      for (int64_t i = 0, n = spec.numElements(); i < n; ++i)
        t->set(i, double(rng() >> 11) * (2.0 / 9007199254740992.0) - 1.0);
      inputs.push_back(std::move(*t));
    }
    for (const TensorSpec &spec : sig.outputs) {
      auto t = HostTensor::allocate(spec, "an output");
      if (!t)
        return t.takeError();
      outputs.push_back(std::move(*t));
    }
    for (HostTensor &t : inputs)
      in.push_back(t.view());
    for (HostTensor &t : outputs)
      out.push_back(t.view());
    return llvm::Error::success();
  }
};

std::shared_ptr<const tuning::RecordSet>
tune::candidateRecords(const std::string &key, const std::string &target,
                       const tuning::ScheduleFields &schedule) {
  tuning::Record record;
  record.key = key;
  record.target = target;
  record.schedule = schedule;
  record.timeMs = 1;
  auto set = std::make_shared<tuning::RecordSet>();
  set->add(record);
  return set;
}

/// The typed neo.schedule of schedule fields for the task's op.
static FailureOr<Attribute> typedSchedule(MLIRContext *ctx, const OpTask &task,
                                          const tuning::ScheduleFields &fields,
                                          std::string &error) {
  if (task.tunable.kind == TunableOp::Kind::Gemm) {
    auto s = gemmScheduleFromFields(fields, task.tunable.gemm.vectorWidth, error);
    if (failed(s))
      return failure();
    return scheduleAttr(ctx, *s);
  }
  auto s = genericScheduleFromFields(fields, error);
  if (failed(s))
    return failure();
  return scheduleAttr(ctx, *s);
}

/// The module and engine options to compile a candidate with: a single op's
/// module gets the schedule as the neo.schedule of its neo.compute (it
/// follows the op to its linalg op); a fused kernel's schedule goes into
/// in-memory records that the engine applies by key. Both in memory.
static FailureOr<OwningOpRef<ModuleOp>>
candidateModule(const OpTask &task, const std::optional<tuning::ScheduleFields> &schedule,
                const MeasureOptions &options, EngineOptions &engine, std::string &error) {
  OwningOpRef<ModuleOp> module = task.module.get().clone();
  engine = options.engine;
  if (!schedule)
    return module;
  if (task.numOps > 1) {
    engine.tuningRecordSet = candidateRecords(task.tunable.key, options.target, *schedule);
    return module;
  }
  FailureOr<Attribute> attr = typedSchedule(module->getContext(), task, *schedule, error);
  if (failed(attr))
    return failure();
  ComputeOp last;
  module->walk([&](ComputeOp op) { last = op; });
  if (last)
    last->setAttr(kScheduleAttrName, *attr);
  return module;
}

struct EngineMeasurer::Buffers : KernelBuffers {};

EngineMeasurer::EngineMeasurer(OpTask &task, ScheduleOf scheduleOf, const MeasureOptions &options)
    : task(task), scheduleOf(std::move(scheduleOf)), options(options) {}

EngineMeasurer::~EngineMeasurer() = default;

std::optional<double> EngineMeasurer::measure(const tuning::Point &p, double secondsLeft,
                                              std::string &error) {
  return time(scheduleOf(p), secondsLeft, error);
}

std::optional<double> EngineMeasurer::measureDefault(double secondsLeft, std::string &error) {
  return time(std::nullopt, secondsLeft, error);
}

std::optional<double> EngineMeasurer::time(const std::optional<tuning::ScheduleFields> &schedule,
                                           double secondsLeft, std::string &error) {
  double start = seconds();
  if (!buffers) {
    buffers = std::make_unique<Buffers>();
    if (llvm::Error err = buffers->allocate(*task.module, options.seed)) {
      error = llvm::toString(std::move(err));
      buffers.reset();
      return std::nullopt;
    }
  }
  EngineOptions engineOptions;
  FailureOr<OwningOpRef<ModuleOp>> module =
      candidateModule(task, schedule, options, engineOptions, error);
  if (failed(module))
    return std::nullopt;
  // A fresh engine per candidate: its code is freed with it.
  Engine engine(engineOptions);
  auto exe = engine.compile(**module);
  if (!exe) {
    error = llvm::toString(exe.takeError());
    return std::nullopt;
  }
  auto run = [&]() -> std::optional<double> {
    double t0 = seconds();
    if (llvm::Error err = (*exe)->run(kKernel, buffers->in, buffers->out)) {
      error = llvm::toString(std::move(err));
      return std::nullopt;
    }
    return (seconds() - t0) * 1e3;
  };
  std::optional<double> warmup = run();
  if (!warmup)
    return std::nullopt;
  // As many timed runs as fit (at least one).
  double left = std::min(options.maxRunSeconds, secondsLeft - (seconds() - start));
  unsigned runs = std::clamp<unsigned>(unsigned(std::max(0.0, left * 1e3 / *warmup)), 1,
                                       std::max(1u, options.repeat));
  std::vector<double> times;
  for (unsigned r = 0; r < runs; ++r) {
    std::optional<double> t = run();
    if (!t)
      return std::nullopt;
    times.push_back(*t);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

Verification tune::verifySchedule(const OpTask &task, const tuning::ScheduleFields &schedule,
                                  const MeasureOptions &options, double maxPoints) {
  Verification result;
  OwningOpRef<ModuleOp> module;
  result.how = "interpreter";
  if (task.points <= maxPoints) {
    module = task.module.get().clone();
  } else {
    SmallVector<int64_t> shape;
    if (task.numOps == 1)
      module = reduceForVerification(task, maxPoints, shape);
    if (!module) {
      result.message = "too large for the interpreter and cannot be reduced";
      return result;
    }
    result.how =
        "interpreter, reduced to " +
        llvm::join(llvm::map_range(shape, [](int64_t d) { return std::to_string(d); }), "x");
  }
  result.status = Verification::Status::Failed;
  EngineOptions engineOptions = options.engine;
  if (task.numOps == 1) {
    // The schedule goes on the op itself (the reduced op has another key).
    FailureOr<Attribute> attr = typedSchedule(module->getContext(), task, schedule, result.message);
    if (failed(attr))
      return result;
    module->walk([&](ComputeOp op) { op->setAttr(kScheduleAttrName, *attr); });
  } else {
    engineOptions.tuningRecordSet = candidateRecords(task.tunable.key, options.target, schedule);
  }

  Engine engine(engineOptions);
  auto exe = engine.compile(*module);
  if (!exe) {
    result.message = llvm::toString(exe.takeError());
    return result;
  }
  KernelBuffers buffers;
  if (llvm::Error err = buffers.allocate(*module, options.seed + 1)) {
    result.message = llvm::toString(std::move(err));
    return result;
  }
  if (llvm::Error err = (*exe)->run(kKernel, buffers.in, buffers.out)) {
    result.message = llvm::toString(std::move(err));
    return result;
  }
  std::vector<RefTensor> refInputs;
  for (const HostTensor &t : buffers.inputs) {
    RefTensor r;
    r.shape = t.getSpec().shape;
    for (int64_t i = 0, n = t.getSpec().numElements(); i < n; ++i)
      r.data.push_back(t.get(i));
    refInputs.push_back(std::move(r));
  }
  std::string diagnostics;
  FailureOr<std::vector<RefTensor>> reference;
  {
    ScopedDiagnosticHandler handler(module->getContext(), [&](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
    reference = interpret(*module, kKernel, refInputs);
  }
  if (failed(reference)) {
    result.message = "the interpreter failed: " + diagnostics;
    return result;
  }
  const HostTensor &got = buffers.outputs.front();
  const RefTensor &want = reference->front();
  auto [rtol, atol] = getDefaultTolerance(got.getSpec().type); // neo-run --check's
  double scale = 1, maxError = 0;
  for (double v : want.data)
    if (std::isfinite(v))
      scale = std::max(scale, std::abs(v));
  int64_t bad = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    double g = got.get(int64_t(i)), w = want.data[i];
    bool same = (std::isnan(g) && std::isnan(w)) || g == w;
    double err = same ? 0 : std::abs(g - w);
    if (!same && !(err <= atol * scale + rtol * std::abs(w)))
      ++bad;
    if (std::isfinite(err))
      maxError = std::max(maxError, err);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "max abs error " << llvm::format("%.3g", maxError);
  if (bad)
    os << ", " << bad << " of " << want.data.size() << " elements differ";
  result.message = text;
  result.status = bad ? Verification::Status::Failed : Verification::Status::Passed;
  return result;
}
