//===- CostModels.h - Analytical cost models of neo-tile's schedules -*- C++ -*-===//
//
// The search spaces of the two schedule skeletons of neo-tile and the models
// that rank their points before anything is measured (docs/schedules.md):
//
// * GEMM (packed, register-blocked): parameters mr, nr/V, mc/mr, nc/nr, kc,
//   threads. The model counts the micro-kernel's cycles per k step (FMA
//   throughput, load ports, FMA latency, register spills), the edge waste of
//   partial tiles, packing and C-tile traffic, cache fit of the micro-panels
//   (L1), the packed A block (L2) and B block (L3), and load balance.
// * Generic (threads over the first parallel loop, vector tiles along the
//   innermost one): parameters vector, threads. The model counts vector
//   chunks and their tail waste, and the parallel split.
//
// No LLVM here.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_TUNING_COSTMODELS_H
#define NEO_TUNING_COSTMODELS_H

#include "neo/Tuning/Target.h"
#include "neo/Tuning/Tuner.h"
#include "neo/Tuning/TuningRecords.h"

namespace mlir {
namespace neo {
namespace tuning {

/// Checks schedule fields; "" when usable, else why not.
using FieldsValidator = std::function<std::string(const ScheduleFields &)>;

/// A contraction as the GEMM generator sees it.
struct GemmShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  int64_t vectorWidth = 16; // lanes of the generator's vectors
  int64_t elementBytes = 4;
  // The target (CpuTarget): native lanes for this element type, vector
  // registers and FMA pipes. A generator vector wider than a native one is
  // split by LLVM, and a register tile whose accumulators, B vectors and A
  // broadcast do not fit in the registers spills.
  int64_t nativeLanes = 16;
  int64_t vectorRegisters = 32;
  int64_t fmaUnits = 2;
  bool bRowsContiguous = true; // B packs with vector loads
};

class GemmCostModel : public CostModel {
public:
  /// `maxThreads`: the threads of the target; `validate` (optional) checks
  /// the schedule fields a point stands for, beyond NeoScheduleRules'
  /// checkCpuGemm, which check() applies first.
  GemmCostModel(GemmShape shape, HostCaches caches, int64_t maxThreads,
                FieldsValidator validate = {});

  const std::vector<Param> &getParams() const override { return params; }
  std::string check(const Point &p) const override;
  double predict(const Point &p) const override;
  Point canonicalize(const Point &p) const override;

  /// The schedule a point stands for: {mr, nr, mc, nc, kc, threads}.
  ScheduleFields toSchedule(const Point &p) const;
  /// The point of a schedule (nothing if it is not on the grid of mc/nc
  /// multiples of the register tile).
  std::optional<Point> fromSchedule(const ScheduleFields &s) const;

private:
  struct Blocks {
    int64_t mr, nr, mc, nc, kc;
    bool parallel;
    int64_t workers;
  };
  /// The blocks the generator actually uses for `p` (clamped to the problem).
  Blocks effectiveBlocks(const Point &p) const;

  GemmShape shape;
  HostCaches caches;
  int64_t maxThreads;
  FieldsValidator validate;
  std::vector<Param> params;
};

/// An elementwise or reduction op as neo-tile's generic schedule sees it.
struct GenericShape {
  std::vector<int64_t> ranges; // static loop ranges
  std::vector<bool> parallel;  // per loop
  int64_t elementBytes = 4;
  int64_t nativeLanes = 16; // lanes of the widest native vector
  bool vectorizable = true; // whether linalg's vectorizer accepts it
};

class GenericCostModel : public CostModel {
public:
  GenericCostModel(GenericShape shape, HostCaches caches, int64_t maxThreads,
                   FieldsValidator validate = {});

  const std::vector<Param> &getParams() const override { return params; }
  std::string check(const Point &p) const override;
  double predict(const Point &p) const override;
  Point canonicalize(const Point &p) const override;

  /// {vector, threads}.
  ScheduleFields toSchedule(const Point &p) const;
  std::optional<Point> fromSchedule(const ScheduleFields &s) const;

private:
  GenericShape shape;
  HostCaches caches;
  int64_t maxThreads;
  FieldsValidator validate;
  std::vector<Param> params;
};

} // namespace tuning
} // namespace neo
} // namespace mlir

#endif // NEO_TUNING_COSTMODELS_H
