//===- Timing.h - Summaries of timed runs -----------------------*- C++ -*-===//
#ifndef NEO_RUNTIME_SUPPORT_TIMING_H
#define NEO_RUNTIME_SUPPORT_TIMING_H

#include <algorithm>
#include <vector>

namespace mlir {
namespace neo {

/// Per-run times in milliseconds (on the GPU: kernel time by CUDA events; on
/// the CPU: wall time of each run).
struct TimingResult {
  double medianMs = 0, minMs = 0, maxMs = 0, meanMs = 0;
  unsigned runs = 0;
};

/// The summary of `times` (milliseconds; empty gives zeros).
inline TimingResult summarizeTimes(std::vector<double> times) {
  TimingResult r;
  if (times.empty())
    return r;
  std::sort(times.begin(), times.end());
  r.runs = static_cast<unsigned>(times.size());
  r.medianMs = times[times.size() / 2];
  r.minMs = times.front();
  r.maxMs = times.back();
  double sum = 0;
  for (double t : times)
    sum += t;
  r.meanMs = sum / times.size();
  return r;
}

} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_SUPPORT_TIMING_H
