//===- ScheduleRecords.h - neo-tile's schedules as tuning records -*- C++ -*-===//
//
// What ties the tuning library (neo/Tuning) to neo-tile: the record key of
// a linalg op, schedule fields to and from GemmSchedule / GenericSchedule,
// and the validation of records. See docs/schedules.md.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_CPU_SCHEDULERECORDS_H
#define NEO_CODEGEN_CPU_SCHEDULERECORDS_H

#include "neo/Codegen/CPU/Schedule.h"
#include "neo/Tuning/CostModels.h"
#include "neo/Tuning/TuningRecords.h"

#include <optional>

namespace mlir {
namespace neo {

/// A linalg op on buffers that neo-tile schedules, as records see it.
struct TunableOp {
  enum class Kind { Gemm, Generic };
  Kind kind = Kind::Generic;
  std::string key;
  GemmProblem gemm;             // for Kind::Gemm
  tuning::GenericShape generic; // for Kind::Generic
};

/// A contraction the CPU GEMM generator handles (key: GemmProblem::key()),
/// a bilinear generic that neo-tile runs as an implicit GEMM where
/// `implicitGemm` (a convolution and its gradients: a GEMM-kind op whose
/// layout is "implicit", key: GemmProblem::key() and the " sig=" of its
/// genericKey(), so that two such ops of equal sizes keep apart), or another
/// op with static loop ranges (key: genericKey()). Nothing for ops on
/// tensors or with dynamic shapes.
std::optional<TunableOp> analyzeTunable(linalg::LinalgOp op, bool implicitGemm = true);

/// The record key of an op that is not a GEMM, e.g.
/// "generic f32 linalg.generic loops=64x1024 iterators=pr sig=0123456789abcdef":
/// the element type, op name, loop ranges and iterator kinds, and a hash of
/// the operand shapes, indexing maps, attributes (but neo.*) and the body.
std::string genericKey(linalg::LinalgOp op);

tuning::ScheduleFields toFields(const GemmSchedule &schedule);
tuning::ScheduleFields toFields(const GenericSchedule &schedule);
/// Schedules from record fields: every field present, none unknown, valid.
FailureOr<GemmSchedule> gemmScheduleFromFields(const tuning::ScheduleFields &fields,
                                               int64_t vectorWidth, std::string &error);
FailureOr<GenericSchedule> genericScheduleFromFields(const tuning::ScheduleFields &fields,
                                                     std::string &error);

/// The `neo.schedule` attribute of a schedule: #neo.cpu_gemm<...> or
/// #neo.cpu_generic<...>.
Attribute scheduleAttr(MLIRContext *ctx, const GemmSchedule &schedule);
Attribute scheduleAttr(MLIRContext *ctx, const GenericSchedule &schedule);

/// Checks the schedule of a record against its key (a tuning::Validator):
/// "" when neo-select-schedules can use it.
std::string validateScheduleRecord(const tuning::Record &record);

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_CPU_SCHEDULERECORDS_H
