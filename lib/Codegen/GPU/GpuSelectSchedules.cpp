//===- GpuSelectSchedules.cpp - neo-gpu-select-schedules ------------------===//
//
// Decides the GPU schedule of every bufferized linalg op once, as a typed
// `neo.schedule` attribute that neo-gpu-map applies: the op's own
// attribute, else the pass options.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/GPU/Passes.h"
#include "neo/Codegen/Utils/Utils.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Tuning/TuningRecords.h"

#include <memory>

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOGPUSELECTSCHEDULES
#include "neo/Codegen/GPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

struct NeoGpuSelectSchedulesPass
    : public mlir::neo::impl::NeoGpuSelectSchedulesBase<NeoGpuSelectSchedulesPass> {
  using Base::Base;

  /// The schedules of the options, checked once.
  LogicalResult initialize(MLIRContext *ctx) override {
    Location loc = UnknownLoc::get(ctx);
    if (smCount < 1 || smCount > GpuTarget::kMaxSmCount)
      return emitError(loc) << "neo-gpu-select-schedules: sm-count must be between 1 and "
                            << GpuTarget::kMaxSmCount << ", not " << static_cast<int64_t>(smCount);
    if (minBlocks < -1)
      return emitError(loc) << "neo-gpu-select-schedules: min-blocks must be -1 (twice "
                               "sm-count), 0 (never adapt) or positive, not "
                            << static_cast<int64_t>(minBlocks);
    gpuTarget.smCount = smCount;
    gemm = schedules::GpuGemmParams();
    gemm.bm = bm, gemm.bn = bn, gemm.bk = bk, gemm.tm = tm, gemm.tn = tn, gemm.wm = wm,
    gemm.wn = wn, gemm.stages = stages;
    gemm.minBlocks = minBlocks < 0 ? 2 * smCount : minBlocks;
    if (!schedules::parseGpuMma(mma, gemm.mma))
      return emitError(loc) << "neo-gpu-select-schedules: invalid gemm options: mma must be "
                               "\"none\", \"tf32\", \"wgmma\" or \"auto\", not \""
                            << mma << "\"";
    // wgmma's tile rule is checked per op (the options' tiles are the
    // other kernels' when wgmma chooses its own).
    wgmmaTiles =
        gemm.mma == schedules::GpuMma::Wgmma && (gemm.bk == 64 || gemm.bk == 32) && gemm.wm == 64;
    schedules::GpuGemmParams checked = gemm;
    if (checked.mma == schedules::GpuMma::Wgmma && !wgmmaTiles)
      checked.mma = schedules::GpuMma::Auto;
    if (std::string error = schedules::checkGpuGemm(checked, schedules::GpuGemmKernel::Any);
        !error.empty())
      return emitError(loc) << "neo-gpu-select-schedules: invalid gemm options: " << error;
    if (std::string error = schedules::checkGpuGeneric({blockSize}); !error.empty())
      return emitError(loc) << "neo-gpu-select-schedules: invalid options: " << error;
    recordSet.reset();
    if (!records.empty()) {
      tuning::LoadOptions options;
      options.target = target;
      options.validate = [](const tuning::Record &r) {
        schedules::GpuGemmParams p;
        return gpuGemmFromFields(r.schedule, p);
      };
      Location at = FileLineColLoc::get(ctx, records, 0, 0);
      recordSet = tuning::loadUsableRecords(records, options, [&](const std::string &message) {
        emitWarning(at) << "neo-gpu-select-schedules: " << message;
      });
    }
    return success();
  }

  /// The schedule of a record's fields: "" and `p` filled, else the reason.
  static std::string gpuGemmFromFields(const tuning::ScheduleFields &fields,
                                       schedules::GpuGemmParams &p) {
    static const char *const names[] = {"bm", "bn", "bk",  "tm",         "tn",
                                        "wm", "wn", "mma", "min_blocks", "stages"};
    int64_t *slots[] = {&p.bm, &p.bn, &p.bk,   &p.tm,        &p.tn,
                        &p.wm, &p.wn, nullptr, &p.minBlocks, &p.stages};
    for (const auto &[name, value] : fields)
      if (!llvm::is_contained(names, name))
        return "unknown schedule field '" + name + "' for a GPU GEMM";
    for (auto [name, slot] : llvm::zip(names, slots)) {
      auto it = fields.find(name);
      if (it == fields.end())
        return std::string("the schedule has no '") + name + "'";
      if (slot) {
        *slot = it->second;
        continue;
      }
      if (it->second < 0 || it->second > 3)
        return "mma must be 0 (auto), 1 (none), 2 (tf32) or 3 (wgmma)";
      static const schedules::GpuMma modes[] = {schedules::GpuMma::Auto, schedules::GpuMma::None,
                                                schedules::GpuMma::Tf32, schedules::GpuMma::Wgmma};
      p.mma = modes[it->second];
    }
    return schedules::checkGpuGemm(p, schedules::GpuGemmKernel::Any);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    // Copies between buffers become linalg.copy, scheduled like any other op.
    convertCopiesToLinalg(func);
    WalkResult result = func.walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return WalkResult::advance();
      bool isGemm = isGpuGemmCandidate(op);
      if (Attribute attr = op->getAttr(kScheduleAttrName)) {
        if (isa<GpuGemmScheduleAttr>(attr) && !isGemm) {
          op->emitOpError("has a #neo.gpu_gemm schedule but is not a GEMM that the GPU "
                          "kernels handle");
          return WalkResult::interrupt();
        }
        if (!isa<GpuGemmScheduleAttr, GpuGenericScheduleAttr>(attr)) {
          op->emitOpError("neo.schedule must be a #neo.gpu_gemm or #neo.gpu_generic "
                          "attribute, not ")
              << attr;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      }
      if (isGemm && recordSet)
        if (FailureOr<GemmProblem> problem = analyzeGemm(op); succeeded(problem))
          if (const tuning::Record *r = recordSet->lookup(problem->key(), target)) {
            schedules::GpuGemmParams p;
            (void)gpuGemmFromFields(r->schedule, p); // validated when loaded
            op->setAttr(kScheduleAttrName, GpuGemmScheduleAttr::get(ctx, p));
            return WalkResult::advance();
          }
      // Warpgroup MMA on sm_90a (by default there, or on request) where it
      // applies; explicit wgmma tiles (bk = 64, or 32 for tf32; wm = 64) are
      // kept.
      // tf32 on sm_90a: warpgroup MMA for the implicit GEMMs it runs.
      if (isGemm &&
          (gemm.mma == schedules::GpuMma::Wgmma ||
           ((gemm.mma == schedules::GpuMma::Auto || gemm.mma == schedules::GpuMma::Tf32) &&
            target == "cuda-sm_90a"))) {
        if (std::optional<GpuGemmSchedule> s =
                chooseWgmmaSchedule(op, GpuGemmSchedule::fromParams(gemm), wgmmaTiles, gpuTarget)) {
          schedules::GpuGemmParams p;
          (void)s->toParams(p); // mma "wgmma"
          op->setAttr(kScheduleAttrName, GpuGemmScheduleAttr::get(ctx, p));
          return WalkResult::advance();
        }
      }
      if (isGemm) {
        // What wgmma does not run keeps the other kernels' choice.
        schedules::GpuGemmParams p = gemm;
        if (p.mma == schedules::GpuMma::Wgmma)
          p.mma = schedules::GpuMma::Auto;
        op->setAttr(kScheduleAttrName, GpuGemmScheduleAttr::get(ctx, p));
      } else
        op->setAttr(kScheduleAttrName, GpuGenericScheduleAttr::get(ctx, blockSize));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

private:
  schedules::GpuGemmParams gemm;
  /// The options ask for wgmma with its tiles (bk = wm = 64): they are kept.
  bool wgmmaTiles = false;
  GpuTarget gpuTarget;
  std::shared_ptr<const tuning::RecordSet> recordSet;
};

} // namespace
