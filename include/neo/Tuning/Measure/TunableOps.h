//===- TunableOps.h - The ops of a program that neo-tune explores -*- C++ -*-===//
#ifndef NEO_TOOLS_NEO_TUNE_TUNABLEOPS_H
#define NEO_TOOLS_NEO_TUNE_TUNABLEOPS_H

#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Codegen/CPU/ScheduleRecords.h"
#include "neo/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace mlir {
namespace neo {
namespace tune {

/// One distinct op signature of a program, as a module of its own:
/// `func.func @kernel(reads...) -> result` holding one neo.compute (or, for a
/// kernel that the pipeline fuses from several elementwise ops, those ops),
/// which compiles and runs much faster than the program.
struct OpTask {
  OwningOpRef<ModuleOp> module;
  ComputeOp op;         // the (last) neo.compute inside `module`
  unsigned numOps = 1;  // neo.compute ops in `module`
  TunableOp tunable;    // key, kind and shape of the linalg op it becomes
  std::string function; // where it was first found
  unsigned occurrences = 1;
  double flops = 0;  // per run
  double points = 0; // iteration points (what the interpreter visits)
};

struct Discovery {
  std::vector<OpTask> tasks;
  /// Ops whose signature does not occur in the compiled program (fused into
  /// another op there), not tuned.
  unsigned fusedAway = 0;
  /// Keys of scheduled ops of the compiled program that neither a single op
  /// nor a fusion group reproduces: no record can be made for them.
  std::vector<std::string> uncovered;
};

/// The neo.compute ops of the public functions of `module` (or of
/// `function`) without an explicit neo.schedule that lower to one linalg op
/// neo-tile schedules and whose signature occurs in the compiled program,
/// and the groups of elementwise ops that the pipeline fuses into one
/// kernel, one per distinct record key, largest FLOP count first.
/// `pipelineOptions` are the CPU pipeline's (keys depend on them). Ops are
/// taken after canonicalization, with neo.fused kernels dissolved.
FailureOr<Discovery> findTunableOps(ModuleOp module, StringRef function,
                                    const std::string &pipelineOptions, std::string &error);

/// A module like `task.module` (of one op) with fewer iteration points (at most
/// `maxPoints`), for checking a schedule with the interpreter: all dims are
/// cut consistently (operands too) when every read is a plain projection,
/// else only the parallel dims (a sub-box of the output). Null when it
/// cannot be reduced enough. `shape` receives the new iteration bounds.
OwningOpRef<ModuleOp> reduceForVerification(const OpTask &task, double maxPoints,
                                            SmallVectorImpl<int64_t> &shape);

} // namespace tune
} // namespace neo
} // namespace mlir

#endif // NEO_TOOLS_NEO_TUNE_TUNABLEOPS_H
