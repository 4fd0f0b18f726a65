//===- neo-tune.cpp - Explore schedules and record the fastest ------------===//
//
//   neo-tune model.neo [--function f] [--records FILE] [--time-budget S]
//            [--op-budget S] [--trials N] [--seed N] [--target-threads N]
//            [--pipeline-options OPTS] [--repeat N] [--verify=false] [--list]
//
// Finds the ops of a program that neo-tile schedules (contractions that the
// GEMM generator handles, and other linalg ops), builds a module of one op
// per distinct signature, and searches each op's schedule space: samples
// and mutations ranked by an analytical cost model, the best-ranked
// measured with the execution engine (median of several runs on random
// inputs). The fastest schedule is checked against the reference
// interpreter and merged into the records file, which neo-tile, the CPU
// pipeline and the execution engine (NEO_TUNING_RECORDS) reuse.
// See docs/schedules.md.
//
//===----------------------------------------------------------------------===//
#include "neo/Tuning/Measure/Measure.h"
#include "neo/Tuning/Measure/TunableOps.h"
#include <cstdlib>

#include "neo/Frontend/Import.h"
#include "neo/Registration.h"
#include "neo/Support/TemporaryFiles.h"
#include "neo/Tuning/CostModels.h"
#include "neo/Tuning/Target.h"
#include "neo/Tuning/TuningRecords.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::tune;
namespace cl = llvm::cl;

static cl::OptionCategory category("neo-tune options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.neo | file.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string>
    functionName("function", cl::desc("Tune the ops of this function (default: every public one)"),
                 cl::cat(category));
static cl::opt<std::string>
    recordsFile("records", cl::desc("Merge the fastest schedules into this records file (JSON)"),
                cl::cat(category));
static cl::opt<double> timeBudget("time-budget", cl::desc("Seconds for the whole run (default 60)"),
                                  cl::init(60), cl::cat(category));
static cl::opt<double>
    opBudget("op-budget",
             cl::desc("Seconds per op at most (default: an equal share of what is left)"),
             cl::init(0), cl::cat(category));
static cl::opt<unsigned> trials("trials", cl::desc("Candidates measured per op at most"),
                                cl::init(64), cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the search and of the inputs"), cl::init(0),
                              cl::cat(category));
static cl::opt<int64_t>
    threads("target-threads",
            cl::desc("Threads the code is compiled for (default: the pipeline's, 2)"), cl::init(0),
            cl::cat(category));
static cl::opt<std::string>
    pipelineOptions("pipeline-options",
                    cl::desc("Options of neo-lower-to-cpu, e.g. 'fuse-elementwise=false'"),
                    cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"), cl::init(3), cl::Prefix,
                                  cl::cat(category));
static cl::opt<unsigned> repeat("repeat", cl::desc("Timed runs per candidate (median)"),
                                cl::init(5), cl::cat(category));
static cl::opt<bool>
    verifyBest("verify",
               cl::desc("Check the fastest schedule against the interpreter (default true)"),
               cl::init(true), cl::cat(category));
static cl::opt<double> verifyMaxPoints(
    "verify-max-points",
    cl::desc("Iteration points the interpreter checks at most (larger ops are reduced)"),
    cl::init(2e7), cl::cat(category));
static cl::opt<bool> listOnly("list", cl::desc("List the tunable ops and their keys, and stop"),
                              cl::cat(category));
static cl::opt<bool> printTarget("print-target", cl::desc("Print the records' target and stop"),
                                 cl::cat(category));
static cl::opt<bool> quiet("quiet", cl::desc("No progress display"), cl::cat(category));

namespace {

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "neo-tune") << message << "\n";
  return 1;
}

void warn(const llvm::Twine &message) {
  llvm::WithColor::warning(llvm::errs(), "neo-tune") << message << "\n";
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// "mr=8 nr=32 mc=128 nc=512 kc=256 threads=2" (fields in a fixed order).
std::string formatSchedule(const tuning::ScheduleFields &fields) {
  static const char *order[] = {"mr", "nr", "mc", "nc", "kc", "vector", "threads"};
  std::string s;
  for (const char *name : order) {
    auto it = fields.find(name);
    if (it != fields.end())
      s += (s.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(it->second);
  }
  return s;
}

/// `x` rounded to `digits` significant digits.
double roundSignificant(double x, int digits) {
  if (!(x > 0) || !std::isfinite(x))
    return x;
  double scale = std::pow(10.0, digits - 1 - int(std::floor(std::log10(x))));
  return std::round(x * scale) / scale;
}

std::string formatRate(double flops, double ms) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.3f ms", ms);
  if (flops > 0)
    os << llvm::format(" (%.1f GFLOP/s)", flops / (ms * 1e6));
  return s;
}

/// Progress on stderr: one line rewritten in place on a terminal, a line per
/// trial otherwise.
class Progress {
public:
  Progress(bool enabled) : enabled(enabled), tty(llvm::sys::Process::StandardErrIsDisplayed()) {}

  void update(const std::string &prefix, const tuning::TuneResult &r, unsigned maxTrials,
              double budget, double flops,
              const std::function<tuning::ScheduleFields(const tuning::Point &)> &fields) {
    if (!enabled)
      return;
    const tuning::Trial &t = r.trials.back();
    std::string line;
    llvm::raw_string_ostream os(line);
    os << prefix << " trial " << r.trials.size() << "/" << maxTrials;
    if (!tty) {
      os << " [" << formatSchedule(fields(t.point)) << "]: ";
      os << (t.timeMs ? formatRate(flops, *t.timeMs) : "failed");
      os << ";";
    }
    if (r.best) {
      double best = *r.trials[*r.best].timeMs;
      os << " best " << (flops > 0 ? "" : "time ");
      if (flops > 0)
        os << llvm::format("%.1f GFLOP/s", flops / (best * 1e6));
      else
        os << llvm::format("%.3f ms", best);
    }
    os << llvm::format("  %.1f/%.1f s", t.elapsed, budget);
    if (tty)
      llvm::errs() << "\r\x1b[K" << line;
    else
      llvm::errs() << line << "\n";
    pending = tty;
  }
  void finish() {
    if (pending)
      llvm::errs() << "\n";
    pending = false;
  }

private:
  bool enabled, tty;
  bool pending = false;
};

/// An op's search space: the model of its skeleton, how points become
/// schedule fields, and neo-tile's default schedule as a point.
struct Space {
  std::unique_ptr<tuning::CostModel> model;
  std::function<tuning::ScheduleFields(const tuning::Point &)> scheduleOf;
  std::optional<tuning::Point> initial;
};

Space buildSpace(const OpTask &task, const tuning::CpuTarget &cpu, int64_t threads) {
  const tuning::HostCaches &caches = cpu.caches;
  Space space;
  if (task.tunable.kind == TunableOp::Kind::Gemm) {
    const GemmProblem &g = task.tunable.gemm;
    tuning::GemmShape shape;
    shape.batch = g.batch;
    shape.m = g.m;
    shape.n = g.n;
    shape.k = g.k;
    shape.vectorWidth = g.vectorWidth;
    shape.elementBytes = g.elementType == "f64" ? 8 : 4;
    shape.nativeLanes = cpu.lanes(shape.elementBytes);
    shape.vectorRegisters = cpu.vectorRegisters;
    shape.fmaUnits = std::max<int64_t>(1, cpu.fmaUnits);
    // Layouts are "A,B,C" roles; B packs with vectors when n is innermost.
    llvm::StringRef bLayout = llvm::StringRef(g.layout).split(',').second.split(',').first;
    shape.bRowsContiguous = bLayout.ends_with("n");
    int64_t v = g.vectorWidth;
    auto gemm = std::make_unique<tuning::GemmCostModel>(shape, caches, threads,
                                                        [v](const tuning::ScheduleFields &f) {
                                                          std::string why;
                                                          (void)gemmScheduleFromFields(f, v, why);
                                                          return why;
                                                        });
    // The starting point: neo-select-schedules' default for the cpu.
    tuning::GemmTile tile = tuning::defaultGemmTile(cpu, shape.elementBytes, v);
    GemmSchedule defaults;
    defaults.mr = tile.mr, defaults.nr = tile.nr, defaults.mc = tile.mc, defaults.nc = tile.nc;
    defaults.kc = tile.kc;
    defaults.threads = threads;
    space.initial = gemm->fromSchedule(toFields(defaults));
    space.scheduleOf = [m = gemm.get()](const tuning::Point &p) { return m->toSchedule(p); };
    space.model = std::move(gemm);
    return space;
  }
  tuning::GenericShape genericShape = task.tunable.generic;
  genericShape.nativeLanes = cpu.lanes(genericShape.elementBytes);
  auto generic = std::make_unique<tuning::GenericCostModel>(
      genericShape, caches, threads, [](const tuning::ScheduleFields &f) {
        std::string why;
        (void)genericScheduleFromFields(f, why);
        return why;
      });
  GenericSchedule defaults;
  defaults.threads = threads;
  space.initial = generic->fromSchedule(toFields(defaults));
  space.scheduleOf = [m = generic.get()](const tuning::Point &p) { return m->toSchedule(p); };
  space.model = std::move(generic);
  return space;
}

} // namespace

int main(int argc, char **argv) {
  // OpenMP threads that spin between timed runs (the default wait policy)
  // steal the core the next candidate runs on, so multi-threaded schedules
  // measured 2-6x slower here than in neo-run. Sleep instead, unless the
  // user chose a policy.
  setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  llvm::InitLLVM init(argc, argv);
  // Temporaries of the records file go away on SIGINT/SIGTERM/SIGHUP.
  mlir::neo::installTemporaryFileCleanup();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Neo: explore CPU schedules and record the fastest\n");
  double start = now();

  // The pipeline (and so the target) the records are for.
  std::string pipeline = pipelineOptions;
  auto parsed = [&]() {
    std::string errors;
    llvm::raw_string_ostream os(errors);
    auto options = std::make_unique<CpuPipelineOptions>();
    if (failed(options->parseFromString(pipeline, os))) {
      fail("invalid --pipeline-options '" + pipeline + "': " + errors);
      options.reset();
    }
    return options;
  }();
  if (!parsed)
    return 1;
  if (threads > 0) {
    if (llvm::StringRef(pipeline).contains("threads="))
      return fail("give the threads either with --target-threads or in --pipeline-options");
    pipeline += (pipeline.empty() ? "" : " ") + ("threads=" + std::to_string(threads));
  }
  int64_t targetThreads = threads > 0 ? int64_t(threads) : int64_t(parsed->threads);
  if (targetThreads < 1)
    return fail("threads must be at least 1");
  std::string cpuError;
  std::optional<tuning::CpuTarget> cpu = tuning::parseCpuTarget(parsed->cpu, cpuError);
  if (!cpu)
    return fail(cpuError);
  // The pipeline's tuning-target, when given, is what its compilations look
  // records up under: the records and the candidates use it too.
  std::string target = parsed->tuningTarget.empty() ? cpu->recordsTarget(targetThreads)
                                                    : std::string(parsed->tuningTarget);
  if (printTarget) {
    llvm::outs() << target << "\n";
    return 0;
  }
  if (inputFile.empty())
    return fail("no input file");

  DialectRegistry registry;
  registerNeoCompilerDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string error;
  OwningOpRef<ModuleOp> module = parseNeoOrMLIRFile(inputFile, sourceMgr, &context, error);
  if (!module)
    return error.empty() ? 1 : fail(error);

  auto discovery = findTunableOps(*module, functionName, pipeline, error);
  if (failed(discovery))
    return fail(error);
  std::vector<OpTask> *tasks = &discovery->tasks;
  llvm::outs() << "neo-tune: target " << target << ", " << tasks->size() << " tunable op signature"
               << (tasks->size() == 1 ? "" : "s")
               << llvm::format(", budget %.0f s", double(timeBudget)) << "\n";
  if (discovery->fusedAway)
    llvm::outs() << "  (" << discovery->fusedAway
                 << " single-op signatures occur only inside fused kernels)\n";
  for (const std::string &key : discovery->uncovered)
    llvm::outs() << "  not tunable (no op or group of ops has its key): " << key << "\n";
  if (listOnly) {
    for (const OpTask &t : *tasks)
      llvm::outs() << "  " << t.tunable.key << "  (@" << t.function << ", " << t.occurrences << "x"
                   << (t.numOps > 1 ? ", fused from " + std::to_string(t.numOps) + " ops" : "")
                   << ", " << llvm::format("%.3g", t.flops * 1e-9) << " GFLOP)\n";
    return 0;
  }
  if (recordsFile.empty())
    warn("no --records FILE: the results are not saved");

  // Candidates are compiled in memory: single ops with the schedule on the
  // op, kernels fused from several ops with in-memory records for the
  // target the pipeline computes (no temporary file, and never the
  // records of the environment or of --records).
  MeasureOptions measure;
  measure.engine.optLevel = optLevel;
  measure.engine.pipelineOptions = pipeline;
  measure.target = target;
  measure.repeat = repeat;
  measure.seed = seed;
  Progress progress(!quiet);
  bool ok = true;

  for (size_t i = 0; i < tasks->size(); ++i) {
    OpTask &task = (*tasks)[i];
    llvm::outs() << "op " << i + 1 << "/" << tasks->size() << ": " << task.tunable.key << " (@"
                 << task.function;
    if (task.numOps > 1)
      llvm::outs() << ", fused from " << task.numOps << " ops";
    llvm::outs() << llvm::format(", %.3g GFLOP)", task.flops * 1e-9) << "\n";
    double remaining = timeBudget - (now() - start);
    if (remaining <= 0) {
      llvm::outs() << "  skipped: the time budget is spent\n";
      continue;
    }
    double share = remaining / double(tasks->size() - i);
    if (opBudget > 0)
      share = std::min(share, double(opBudget));
    // Keep time for checking the winner.
    double reserve =
        verifyBest ? std::min(share / 3, 0.3 + std::min(task.points, double(verifyMaxPoints)) / 3e7)
                   : 0;

    Space space = buildSpace(task, *cpu, targetThreads);
    tuning::CostModel *model = space.model.get();
    const auto &scheduleOf = space.scheduleOf;
    std::optional<tuning::Point> initial = space.initial;

    tuning::TunerOptions options;
    options.trials = trials;
    options.seed = seed + i;
    EngineMeasurer measurer(task, scheduleOf, measure);
    // The baseline: neo-tile's defaults, measured as the first trial when the
    // search space holds them, else on their own.
    std::optional<double> baselineMs;
    std::string baselineError;
    double opStart = now();
    if (initial && !model->check(*initial).empty())
      initial.reset(); // Not a valid point: neo-tile falls back to something else.
    if (initial)
      options.initial.push_back(*initial);
    else
      baselineMs = measurer.measureDefault(share - reserve, baselineError);
    // Most of the share searches; some is kept to confirm the winners.
    options.timeBudget = std::max(0.0, 0.85 * share - reserve - (now() - opStart));
    std::string prefix = "[op " + std::to_string(i + 1) + "/" + std::to_string(tasks->size()) + "]";
    tuning::TuneResult result =
        tuning::tune(*model, measurer, options, [&](const tuning::TuneResult &r) {
          progress.update(prefix, r, trials, options.timeBudget, task.flops, scheduleOf);
        });
    progress.finish();

    const tuning::Trial *defaultTrial =
        !result.trials.empty() && result.trials.front().origin == tuning::Trial::Origin::Initial
            ? &result.trials.front()
            : nullptr;
    std::vector<size_t> ranking = result.ranking();

    // The fastest few and the default are measured again, back to back, while
    // the op's share lasts, so that a lucky first median does not win.
    std::map<size_t, double> confirmed; // trial -> mean of both medians
    {
      std::vector<size_t> again(ranking.begin(),
                                ranking.begin() + std::min<size_t>(3, ranking.size()));
      if (defaultTrial && defaultTrial->timeMs && !llvm::is_contained(again, 0))
        again.push_back(0);
      double perTrial = result.trials.empty() ? 0 : result.elapsed / result.trials.size();
      for (size_t index : again) {
        double left = share - reserve - (now() - opStart);
        if (left < perTrial)
          break;
        std::string ignored;
        if (auto t = measurer.measure(result.trials[index].point, left, ignored))
          confirmed[index] = (*result.trials[index].timeMs + *t) / 2;
      }
    }
    auto timeOf = [&](size_t index) {
      auto it = confirmed.find(index);
      return it != confirmed.end() ? it->second : *result.trials[index].timeMs;
    };
    std::stable_sort(ranking.begin(), ranking.end(),
                     [&](size_t a, size_t b) { return timeOf(a) < timeOf(b); });

    if (defaultTrial) {
      baselineMs = defaultTrial->timeMs ? std::optional<double>(timeOf(0)) : std::nullopt;
      baselineError = defaultTrial->error;
    }
    llvm::outs() << "  default  "
                 << (defaultTrial ? formatSchedule(scheduleOf(defaultTrial->point))
                                  : std::string("(no record)"))
                 << ": "
                 << (baselineMs ? formatRate(task.flops, *baselineMs) : "failed: " + baselineError)
                 << "\n";
    size_t failures = 0;
    for (const tuning::Trial &t : result.trials)
      failures += !t.timeMs;
    if (ranking.empty()) {
      llvm::outs() << "  no candidate ran (" << result.trials.size() << " tried)";
      if (!result.trials.empty())
        llvm::outs() << ": " << result.trials.front().error;
      llvm::outs() << "\n";
      ok = false;
      continue;
    }

    // The fastest candidate that the interpreter agrees with.
    const tuning::Trial *chosen = nullptr;
    Verification verification;
    for (size_t r = 0; r < ranking.size() && r < 3 && !chosen; ++r) {
      const tuning::Trial &t = result.trials[ranking[r]];
      if (!verifyBest) {
        chosen = &t;
        verification.how = "not checked";
        break;
      }
      verification = verifySchedule(task, scheduleOf(t.point), measure, verifyMaxPoints);
      if (verification.status == Verification::Status::Failed) {
        warn("the schedule " + formatSchedule(scheduleOf(t.point)) + " of '" + task.tunable.key +
             "' does not match the interpreter (" + verification.message + "); not recorded");
        continue;
      }
      chosen = &t;
    }
    if (!chosen) {
      ok = false;
      continue;
    }
    double bestMs = timeOf(chosen - result.trials.data());
    llvm::outs() << "  best     " << formatSchedule(scheduleOf(chosen->point)) << ": "
                 << formatRate(task.flops, bestMs);
    if (baselineMs)
      llvm::outs() << llvm::format(", %.2fx the default", *baselineMs / bestMs);
    llvm::outs() << "\n  " << result.trials.size() << " trials"
                 << (failures ? " (" + std::to_string(failures) + " failed)" : std::string())
                 << llvm::format(" in %.1f s", result.elapsed) << ", stopped by "
                 << result.stopReason;
    if (!confirmed.empty())
      llvm::outs() << "; " << confirmed.size() << " measured again";
    llvm::outs() << "\n";
    std::string verified = verification.how;
    if (verifyBest) {
      llvm::outs() << "  checked: " << verification.how;
      if (verification.status == Verification::Status::Skipped)
        llvm::outs() << " (skipped: " << verification.message << ")";
      else
        llvm::outs() << ", " << verification.message;
      llvm::outs() << "\n";
      if (verification.status == Verification::Status::Skipped)
        verified = "skipped";
    }

    if (recordsFile.empty())
      continue;
    // A record slower than no record would only do harm.
    if (!defaultTrial && baselineMs && bestMs >= *baselineMs) {
      llvm::outs() << "  not recorded: the default is faster\n";
      continue;
    }
    tuning::Record record;
    record.key = task.tunable.key;
    record.target = target;
    record.schedule = scheduleOf(chosen->point);
    record.timeMs = roundSignificant(bestMs, 5);
    record.gflops = task.flops > 0 ? roundSignificant(task.flops / (bestMs * 1e6), 5) : 0;
    record.neoVersion = tuning::kNeoVersion;
    record.trials = int64_t(result.trials.size());
    record.verified = verified;
    tuning::RecordSet set;
    set.add(record);
    std::vector<tuning::Diagnostic> diagnostics;
    std::string saveError;
    bool saved = tuning::saveRecords(recordsFile, set, diagnostics, saveError);
    for (const tuning::Diagnostic &d : diagnostics)
      if (d.severity == tuning::Diagnostic::Severity::Warning)
        warn(d.message);
    if (!saved) {
      ok = false;
      fail(saveError);
      continue;
    }
    llvm::outs() << "  recorded in " << recordsFile << "\n";
  }
  llvm::outs() << llvm::format("neo-tune: done in %.1f s\n", now() - start);
  return ok ? 0 : 1;
}
