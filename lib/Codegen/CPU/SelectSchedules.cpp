//===- SelectSchedules.cpp - neo-select-schedules: CPU schedules of ops ---===//
//
// Decides the schedule of every linalg op on buffers once, as a typed
// `neo.schedule` attribute that neo-tile applies: the op's own attribute,
// else its tuning record, else the pass options.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"
#include "neo/Codegen/CPU/Schedule.h"
#include "neo/Codegen/CPU/ScheduleRecords.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Tuning/Target.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOSELECTSCHEDULES
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

/// The element type of the op's (first) output, or null.
static Type outputElementType(linalg::LinalgOp op) {
  if (op.getNumDpsInits() == 0)
    return Type();
  return getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
}

/// The op's iterations: the product of its loop ranges (a dynamic range
/// counts as large).
static int64_t iterations(linalg::LinalgOp op) {
  int64_t n = 1;
  for (int64_t r : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(r))
      return std::numeric_limits<int64_t>::max();
    n = r > 0 && n > std::numeric_limits<int64_t>::max() / r ? std::numeric_limits<int64_t>::max()
                                                             : n * r;
  }
  return n;
}

namespace {
/// Which schedule an op takes: the GEMM generator's, the implicit GEMM's or
/// the generic one.
enum class OpClass { Gemm, ImplicitGemm, Generic };

struct NeoSelectSchedulesPass
    : public mlir::neo::impl::NeoSelectSchedulesBase<NeoSelectSchedulesPass> {
  using Base::Base;

  NeoSelectSchedulesPass(const NeoSelectSchedulesOptions &options,
                         std::shared_ptr<const tuning::RecordSet> records)
      : Base(options), givenRecords(std::move(records)) {}

  LogicalResult initialize(MLIRContext *ctx) override {
    recordSet.reset();
    std::string cpuError;
    std::optional<tuning::CpuTarget> parsed = tuning::parseCpuTarget(cpu, cpuError);
    if (!parsed)
      return emitError(UnknownLoc::get(ctx)) << "neo-select-schedules: " << cpuError;
    cpuTarget = *parsed;
    for (int64_t bytes : {4, 8}) {
      GemmSchedule gemm = optionGemm(bytes);
      if (std::string error = schedules::checkCpuGemm(gemm, /*vectorWidth=*/0); !error.empty())
        return emitError(UnknownLoc::get(ctx))
               << "neo-select-schedules: invalid gemm options: " << error;
    }
    if (std::string error = schedules::checkCpuGeneric({vectorSize, threads}); !error.empty())
      return emitError(UnknownLoc::get(ctx)) << "neo-select-schedules: invalid options: " << error;
    if (parallelMinIterations < 0)
      return emitError(UnknownLoc::get(ctx))
             << "neo-select-schedules: parallel-min-iterations must be >= 0, got "
             << static_cast<int64_t>(parallelMinIterations);
    if (parallelMinGemmWork < 0)
      return emitError(UnknownLoc::get(ctx))
             << "neo-select-schedules: parallel-min-gemm-work must be >= 0, got "
             << static_cast<int64_t>(parallelMinGemmWork);
    if (givenRecords)
      return useGivenRecords(ctx);
    if (records.empty())
      return success();
    tuning::LoadOptions options;
    options.target = target.empty() ? cpuTarget.recordsTarget(threads) : std::string(target);
    options.validate = validateScheduleRecord;
    recordTarget = options.target;
    Location at = FileLineColLoc::get(ctx, records, 0, 0);
    recordSet = tuning::loadUsableRecords(records, options, [&](const std::string &message) {
      emitWarning(at) << "neo-select-schedules: " << message;
    });
    return success();
  }

  /// Records given in memory: checked like a file's (an invalid one is an
  /// error here, since no user file is at fault but the caller's code).
  LogicalResult useGivenRecords(MLIRContext *ctx) {
    recordTarget = target.empty() ? cpuTarget.recordsTarget(threads) : std::string(target);
    for (const tuning::Record &record : givenRecords->sorted()) {
      if (record.target != recordTarget)
        continue;
      if (std::string error = validateScheduleRecord(record); !error.empty())
        return emitError(UnknownLoc::get(ctx))
               << "neo-select-schedules: invalid in-memory record for " << record.key << ": "
               << error;
    }
    bool any = llvm::any_of(givenRecords->sorted(),
                            [&](const tuning::Record &r) { return r.target == recordTarget; });
    if (!givenRecords->empty() && !any)
      return emitError(UnknownLoc::get(ctx))
             << "neo-select-schedules: none of the in-memory records is for the target '"
             << recordTarget << "'";
    if (!givenRecords->empty())
      recordSet = givenRecords;
    return success();
  }

  /// The GEMM schedule of the options for elements of `elementBytes`: the
  /// fields left at 0 from the target's default tile.
  GemmSchedule optionGemm(int64_t elementBytes) const {
    int64_t lanes = elementBytes == 4 ? 16 : 8; // the generator's (cpuGemmVectorWidth)
    tuning::GemmTile tile = tuning::defaultGemmTile(cpuTarget, elementBytes, lanes);
    GemmSchedule gemm;
    gemm.mr = gemmMR ? int64_t(gemmMR) : tile.mr;
    gemm.nr = gemmNR ? int64_t(gemmNR) : tile.nr;
    // An explicit f64 nr (e.g. the AVX-512 f32 default 32) narrows until
    // the accumulators fit in 30 registers of 8 lanes.
    if (elementBytes == 8 && gemmNR)
      while (gemm.nr > 8 && gemm.nr % 16 == 0 && gemm.mr > 0 && gemm.mr <= 32 &&
             gemm.mr * (gemm.nr / 8) > 30)
        gemm.nr /= 2;
    // Blocks that are multiples of an explicit tile (formed only from tile
    // fields in range: checkCpuGemm rejects the others before any product).
    bool tileInRange = gemm.mr >= 1 && gemm.mr <= 32 && gemm.nr >= 1 && gemm.nr <= 1024;
    gemm.mc = gemmMC ? int64_t(gemmMC) : tileInRange ? gemm.mr * (tile.mc / tile.mr) : gemm.mr;
    gemm.nc = gemmNC ? int64_t(gemmNC) : tileInRange ? gemm.nr * (tile.nc / tile.nr) : gemm.nr;
    gemm.kc = gemmKC ? int64_t(gemmKC) : tile.kc;
    gemm.threads = threads;
    return gemm;
  }

  /// What neo-tile does with the op. The GEMM generator takes contractions
  /// (analyzeTunable's Gemm kind: f32 or f64, one element type); the
  /// implicit one bilinear generics.
  OpClass classify(linalg::LinalgOp op, std::optional<TunableOp> &tunable) {
    tunable = analyzeTunable(op, implicitGemm);
    if (tunable && tunable->kind == TunableOp::Kind::Gemm)
      return tunable->gemm.layout == "implicit" ? OpClass::ImplicitGemm : OpClass::Gemm;
    // analyzeTunable already tried the implicit GEMM for static f32/f64 ops;
    // the others (dynamic sizes, other element types) are tried here.
    Type elem = outputElementType(op);
    bool tried = tunable && op.getNumDpsInits() == 1 && elem && (elem.isF32() || elem.isF64());
    if (implicitGemm && !tried && succeeded(analyzeCpuImplicitGemm(op)))
      return OpClass::ImplicitGemm;
    return OpClass::Generic;
  }

  /// Checks an explicit schedule against the op.
  LogicalResult checkExplicit(linalg::LinalgOp op, Attribute attr, OpClass cls) {
    if (auto gemm = dyn_cast<CpuGemmScheduleAttr>(attr)) {
      if (cls == OpClass::Generic)
        return op->emitOpError("has a #neo.cpu_gemm schedule but is not a GEMM that the CPU "
                               "generators handle");
      int64_t width = cpuGemmVectorWidth(outputElementType(op));
      if (std::string error = schedules::checkCpuGemm(gemm.getParams(), width); !error.empty())
        return op->emitOpError("invalid cpu_gemm schedule: ") << error;
      return success();
    }
    if (isa<CpuGenericScheduleAttr>(attr))
      return success(); // The verifier's rule is the whole rule.
    return op->emitOpError("neo.schedule must be a #neo.cpu_gemm or #neo.cpu_generic "
                           "attribute, not ")
           << attr;
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      std::optional<TunableOp> tunable;
      OpClass cls = classify(op, tunable);
      if (Attribute explicitAttr = op->getAttr(kScheduleAttrName)) {
        if (failed(checkExplicit(op, explicitAttr, cls)))
          return signalPassFailure();
        continue;
      }
      Type elem = outputElementType(op);
      GemmSchedule gemm = optionGemm(elem && elem.isF64() ? 8 : 4);
      GenericSchedule generic;
      generic.vectorSize = vectorSize;
      generic.threads = threads;
      // A generic record applies to a generic op only: an implicit GEMM's
      // key is a GEMM one (analyzeTunable), so records made before it was
      // (neo-tune measured the generic loop nest) no longer apply to it.
      bool appliedRecord = recordSet && tunable && applyRecord(*tunable, gemm, generic);
      if (appliedRecord && tunable->kind == TunableOp::Kind::Generic)
        cls = OpClass::Generic;
      // Ops of a row-blocked kernel run inside its parallel block loop.
      bool serial = op->hasAttr("neo.serial") || op->getParentOfType<scf::ForallOp>();
      if (serial)
        gemm.threads = generic.threads = 1;
      if (cls == OpClass::Generic) {
        // Small ops from the options: one thread (a tuning record decides
        // for itself).
        if (!appliedRecord && generic.threads > 1 && iterations(op) < parallelMinIterations)
          generic.threads = 1;
        op->setAttr(kScheduleAttrName, scheduleAttr(ctx, generic));
        continue;
      }
      // Small GEMMs from the options: one thread (the product of the loop
      // ranges is the multiply-adds, batch dims included).
      if (!appliedRecord && gemm.threads > 1 && iterations(op) < parallelMinGemmWork)
        gemm.threads = 1;
      int64_t width = cpuGemmVectorWidth(outputElementType(op));
      if (std::string error = schedules::checkCpuGemm(gemm, width); !error.empty()) {
        op->emitOpError("invalid cpu_gemm schedule from the options: ") << error;
        return signalPassFailure();
      }
      op->setAttr(kScheduleAttrName, scheduleAttr(ctx, gemm));
    }
  }

  /// Takes the recorded schedule of the op for the target, if there is one
  /// (records are validated when loaded); returns whether there was.
  bool applyRecord(const TunableOp &tunable, GemmSchedule &gemm, GenericSchedule &generic) {
    const tuning::Record *record = recordSet->lookup(tunable.key, recordTarget);
    if (!record)
      return false;
    std::string error;
    if (tunable.kind == TunableOp::Kind::Gemm) {
      auto s = gemmScheduleFromFields(record->schedule, tunable.gemm.vectorWidth, error);
      if (succeeded(s))
        gemm = *s;
      return succeeded(s);
    }
    auto s = genericScheduleFromFields(record->schedule, error);
    if (succeeded(s))
      generic = *s;
    return succeeded(s);
  }

private:
  /// Shared by the copies of the pass that run on several threads.
  std::shared_ptr<const tuning::RecordSet> recordSet;
  std::string recordTarget;
  tuning::CpuTarget cpuTarget;
  /// Records given by createNeoSelectSchedules(options, records).
  std::shared_ptr<const tuning::RecordSet> givenRecords;
};

} // namespace

std::unique_ptr<Pass>
mlir::neo::createNeoSelectSchedules(const NeoSelectSchedulesOptions &options,
                                    std::shared_ptr<const tuning::RecordSet> records) {
  return std::make_unique<NeoSelectSchedulesPass>(options, std::move(records));
}
