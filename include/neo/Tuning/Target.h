//===- Target.h - What tuning records are specific to -----------*- C++ -*-===//
#ifndef NEO_TUNING_TARGET_H
#define NEO_TUNING_TARGET_H

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace neo {
namespace tuning {

/// The target of tuning records made on this host for code compiled for
/// `threads` threads: "<arch>-<widest vector ISA>-<cpu>/<threads>threads",
/// e.g. "x86_64-avx512-sapphirerapids/2threads" (from LLVM's view of the
/// host CPU and its features).
std::string hostTarget(int64_t threads);

/// The host's data cache sizes in bytes (from sysfs; typical values when
/// unknown) and its number of hardware threads.
struct HostCaches {
  int64_t l1 = 48 << 10;
  int64_t l2 = 2 << 20;
  int64_t l3 = 32 << 20;
  int64_t cores = 1;
};
HostCaches hostCaches();

/// What the CPU code generators and cost models know of the machine they
/// compile for (docs/schedules.md, "Targets"): the host's, or a named one
/// (`cpu=` of neo-lower-to-cpu and neo-select-schedules).
struct CpuTarget {
  std::string name = "host"; // "host", "x86-64-v3", "x86-64-v4" or an LLVM CPU name
  /// For LLVM's code generator: the CPU ("" = the host's, with the host's
  /// features) and extra features ("+avx2,..."; "" = the CPU's own).
  std::string llvmCpu, llvmFeatures;
  std::string arch = "x86_64";
  std::string isa = "generic"; // avx512, avx2, avx, sse4, neon, sve, generic
  int64_t vectorBytes = 16;    // the widest native vector register
  int64_t vectorRegisters = 16;
  int64_t fmaUnits = 2; // FMA pipes per core (0: no FMA)
  HostCaches caches;    // the host's caches and cores in every case

  /// Native vector lanes for elements of `elementBytes`.
  int64_t lanes(int64_t elementBytes) const {
    return std::max<int64_t>(1, vectorBytes / std::max<int64_t>(1, elementBytes));
  }
  /// The target of tuning records for code compiled for it on `threads`
  /// threads (hostTarget(threads) for the host).
  std::string recordsTarget(int64_t threads) const;
};

/// This host (LLVM's view of its CPU and features, caches from sysfs).
const CpuTarget &hostCpuTarget();

/// "host", "native" (the same), "x86-64-v2" (SSE4.2), "x86-64-v3" (AVX2 and
/// FMA: Haswell, Zen), "x86-64-v4" (AVX-512) or an x86 CPU name that LLVM
/// knows ("znver3", "skylake-avx512", "sapphirerapids", ...), on any host.
/// Unknown names give nothing and `error` says why.
std::optional<CpuTarget> parseCpuTarget(const std::string &name, std::string &error);

/// Whether code for `target` runs on this host (its ISA is a subset of the
/// host's: an AVX2 target on an AVX-512 host does, the reverse does not).
bool hostCanRun(const CpuTarget &target);
/// The target's features this host lacks, sorted ("arch x86_64" on another
/// architecture); empty when hostCanRun.
std::vector<std::string> missingHostFeatures(const CpuTarget &target);

/// The default register tile of the packed GEMM for the target: two native
/// vectors per row (nr, a multiple of the generator's `generatorLanes`) and
/// as many rows as leave four vector registers free (for the B vectors and
/// the A broadcast): 6x16 f32 on AVX2 (12 ymm accumulators), 8x32 on
/// AVX-512 (16 of 32 zmm); at most 8 rows. Blocks: mc = 16 mr, nc =
/// max(512, 16 nr), kc = 256.
struct GemmTile {
  int64_t mr, nr, mc, nc, kc;
};
GemmTile defaultGemmTile(const CpuTarget &target, int64_t elementBytes, int64_t generatorLanes);

} // namespace tuning
} // namespace neo
} // namespace mlir

#endif // NEO_TUNING_TARGET_H
