//===- Measure.h - Timing and checking candidate schedules ------*- C++ -*-===//
#ifndef NEO_TOOLS_NEO_TUNE_MEASURE_H
#define NEO_TOOLS_NEO_TUNE_MEASURE_H

#include "neo/Tuning/Measure/TunableOps.h"

#include "neo/Runtime/Execution/Engine.h"
#include "neo/Tuning/Tuner.h"
#include "neo/Tuning/TuningRecords.h"

#include <functional>
#include <memory>

namespace mlir {
namespace neo {
namespace tune {

/// A records file holding just the candidate being compiled, for the kernels
/// fused from several ops (the engine applies it by key); single ops get
/// their candidate in memory, as the typed neo.schedule of their neo.compute,
/// and leave this file empty.
class CandidateRecords {
public:
  /// A file in the system's temporary directory, removed by the destructor.
  static llvm::Expected<std::unique_ptr<CandidateRecords>> create(std::string target);
  /// No file: clear() succeeds, set() fails (for runs without fused kernels).
  static llvm::Expected<std::unique_ptr<CandidateRecords>> inMemory();
  ~CandidateRecords();
  llvm::Error set(const std::string &key, const tuning::ScheduleFields &schedule);
  /// No record: neo-select-schedules' defaults.
  llvm::Error clear();
  const std::string &getPath() const { return path; }

private:
  llvm::Error write(const tuning::RecordSet &set);
  CandidateRecords(std::string path, std::string target)
      : path(std::move(path)), target(std::move(target)) {}
  std::string path, target;
};

struct MeasureOptions {
  runtime::EngineOptions engine; // pipeline options, optimization level, records
  unsigned repeat = 5;           // timed runs per candidate (the median counts)
  double maxRunSeconds = 2.0;    // timed runs stop after this long
  uint64_t seed = 0;             // of the random inputs
};

/// Compiles the task's module with a candidate schedule (on the op itself,
/// or for a fused kernel through `records`, the file that
/// `options.engine.tuningRecords` names) and times it on
/// random inputs: one warm-up run, then the median of up to `repeat` runs.
class EngineMeasurer : public tuning::Measurer {
public:
  using ScheduleOf = std::function<tuning::ScheduleFields(const tuning::Point &)>;
  EngineMeasurer(OpTask &task, ScheduleOf scheduleOf, const MeasureOptions &options,
                 CandidateRecords &records);
  ~EngineMeasurer() override;
  std::optional<double> measure(const tuning::Point &p, double secondsLeft,
                                std::string &error) override;
  /// The time without a schedule (neo-select-schedules' default).
  std::optional<double> measureDefault(double secondsLeft, std::string &error);

private:
  std::optional<double> time(const std::optional<tuning::ScheduleFields> &schedule,
                             double secondsLeft, std::string &error);
  struct Buffers;
  OpTask &task;
  ScheduleOf scheduleOf;
  const MeasureOptions &options;
  CandidateRecords &records;
  std::unique_ptr<Buffers> buffers;
};

struct Verification {
  enum class Status { Passed, Failed, Skipped } status = Status::Skipped;
  std::string how;     // "interpreter", "interpreter, reduced to 243x243x243"
  std::string message; // the error or the largest difference
};

/// Compiles the task with `schedule` and compares its output on random
/// inputs with the reference interpreter (neo-run --check's tolerances).
/// Single ops of more than `maxPoints` iteration points are checked on a
/// reduced copy (reduceForVerification) with the schedule as their
/// neo.schedule attribute; larger fused kernels are skipped.
Verification verifySchedule(const OpTask &task, const tuning::ScheduleFields &schedule,
                            const MeasureOptions &options, CandidateRecords &records,
                            double maxPoints);

} // namespace tune
} // namespace neo
} // namespace mlir

#endif // NEO_TOOLS_NEO_TUNE_MEASURE_H
