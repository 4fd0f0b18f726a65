//===- NeoScheduleAttrs.td - Typed schedules of linalg ops -*- tablegen -*-===//
//
// The schedules that neo-select-schedules (and neo-gpu-select-schedules) put
// on linalg ops as `neo.schedule`, and that neo-tile and neo-gpu-map apply.
// Each verifier is the one validity rule of its schedule, in the LLVM-free
// library NeoScheduleRules (neo/Codegen/Schedules/ScheduleRules.h). See
// docs/schedules.md.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_SCHEDULE_ATTRS_TD
#define NEO_SCHEDULE_ATTRS_TD

include "neo/Dialect/Neo/IR/NeoBase.td"
include "mlir/IR/AttrTypeBase.td"

class Neo_ScheduleAttr<string name, string attrMnemonic> : AttrDef<Neo_Dialect, name> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Neo_CpuGemmScheduleAttr : Neo_ScheduleAttr<"CpuGemmSchedule", "cpu_gemm"> {
  let summary = "Schedule of a packed, register-blocked CPU GEMM (also implicit GEMMs)";
  let description = [{
    `#neo.cpu_gemm<mr = 8, nr = 32, mc = 128, nc = 512, kc = 256, threads = 2>`:
    an `mr` x `nr` register tile (`nr` a multiple of the vector width: 16 lanes
    for f32, 8 for f64, at most 8 vectors and 30 accumulator registers),
    `mc` x `nc` x `kc` cache blocks (multiples of the register tile, at most
    2^24 elements per packed block), and the outer N blocks over `threads`
    (1 to 256). The verifier checks what holds for every vector width;
    neo-select-schedules and neo-tile check the op's width.
  }];
  let parameters = (ins "int64_t":$mr, "int64_t":$nr, "int64_t":$mc, "int64_t":$nc,
                        "int64_t":$kc, "int64_t":$threads);
  let builders = [
    AttrBuilder<(ins "const ::mlir::neo::schedules::CpuGemmParams &":$p), [{
      return $_get($_ctxt, p.mr, p.nr, p.mc, p.nc, p.kc, p.threads);
    }]>
  ];
  let extraClassDeclaration = [{
    ::mlir::neo::schedules::CpuGemmParams getParams() const {
      return {getMr(), getNr(), getMc(), getNc(), getKc(), getThreads()};
    }
  }];
}

def Neo_CpuGenericScheduleAttr : Neo_ScheduleAttr<"CpuGenericSchedule", "cpu_generic"> {
  let summary = "Schedule of a CPU elementwise op or reduction";
  let description = [{
    `#neo.cpu_generic<vector = 16, threads = 2>`: the outermost parallel dim
    split over `threads` (1 to 256), the innermost dim in vectors of
    `vector` lanes (1 to 64).
  }];
  let parameters = (ins "int64_t":$vector, "int64_t":$threads);
  let builders = [
    AttrBuilder<(ins "const ::mlir::neo::schedules::CpuGenericParams &":$p), [{
      return $_get($_ctxt, p.vector, p.threads);
    }]>
  ];
  let extraClassDeclaration = [{
    ::mlir::neo::schedules::CpuGenericParams getParams() const {
      return {getVector(), getThreads()};
    }
  }];
}

def Neo_GpuGemmScheduleAttr : Neo_ScheduleAttr<"GpuGemmSchedule", "gpu_gemm"> {
  let summary = "Schedule of a GPU GEMM kernel (SIMT or tensor cores)";
  let description = [{
    `#neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32,
    mma = "auto">`: a `bm` x `bn` block tile stepping through K by `bk`
    (powers of two, at most 256, 256 and 64); SIMT thread tiles of `tm` x
    `tn` (4, 8, 12 or 16); tensor-core warp tiles of `wm` x `wn` (multiples
    of 16); `mma` is "none" (SIMT FMAs), "tf32" (f32 operands on tensor cores)
    or "auto" (tensor cores for f16 operands only). `min_blocks` (default 0,
    omitted when 0), which neo-gpu-select-schedules sets on its default
    schedule: below this many blocks the kernel takes smaller SIMT tiles and
    then splits K. `stages` (default 0, omitted when 0): the tensor-core
    kernel's shared-memory pipeline depth (2 to 8 cp.async stages; 0: the
    kernel chooses; 1: the single-buffered WMMA kernel). The verifier checks the fields' ranges; neo-gpu-map checks
    the rule of the kernel (SIMT or tensor cores) it chooses for the op.
  }];
  let parameters = (ins "int64_t":$bm, "int64_t":$bn, "int64_t":$bk, "int64_t":$tm, "int64_t":$tn,
      "int64_t":$wm, "int64_t":$wn, StringRefParameter<"tensor-core use">:$mma,
      DefaultValuedParameter<"int64_t", "0">:$min_blocks,
      DefaultValuedParameter<"int64_t", "0">:$stages);
  let builders = [AttrBuilder<(ins "const ::mlir::neo::schedules::GpuGemmParams &":$p), [{
      return $_get($_ctxt, p.bm, p.bn, p.bk, p.tm, p.tn, p.wm, p.wn,
                   ::mlir::neo::schedules::toString(p.mma), p.minBlocks, p.stages);
    }]>];
  let extraClassDeclaration = [{
    /// The parameters (mma "auto" if the string is not a mode: the verifier
    /// rejects such attributes).
    ::mlir::neo::schedules::GpuGemmParams getParams() const {
      ::mlir::neo::schedules::GpuGemmParams p;
      p.bm = getBm(); p.bn = getBn(); p.bk = getBk(); p.tm = getTm(); p.tn = getTn();
      p.wm = getWm(); p.wn = getWn(); p.minBlocks = getMinBlocks(); p.stages = getStages();
      (void)::mlir::neo::schedules::parseGpuMma(getMma().str(), p.mma);
      return p;
    }
  }];
}

def Neo_GpuGenericScheduleAttr : Neo_ScheduleAttr<"GpuGenericSchedule", "gpu_generic"> {
  let summary = "Schedule of a GPU elementwise op or reduction";
  let description = [{
    `#neo.gpu_generic<block = 256>`: threads per block (a multiple of 32
    between 32 and 1024).
  }];
  let parameters = (ins "int64_t":$block);
}

#endif // NEO_SCHEDULE_ATTRS_TD
