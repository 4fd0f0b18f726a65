//===- Target.h - What tuning records are specific to -----------*- C++ -*-===//
#ifndef NEO_TUNING_TARGET_H
#define NEO_TUNING_TARGET_H

#include <cstdint>
#include <string>

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

} // namespace tuning
} // namespace neo
} // namespace mlir

#endif // NEO_TUNING_TARGET_H
