//===- TuningFuzzer.cpp - Fuzz the tuning-record reader -------------------===//
//
// Input: the text of a tuning-records file. parseRecords must never fail
// hard (bad records become diagnostics), and the records it keeps must print
// and parse back to the same records without diagnostics.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "neo/Tuning/TuningRecords.h"

#include <string>
#include <vector>

using namespace mlir::neo::tuning;

static bool sameRecords(const std::vector<Record> &a, const std::vector<Record> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Record &x = a[i], &y = b[i];
    if (x.key != y.key || x.target != y.target || x.schedule != y.schedule ||
        x.timeMs != y.timeMs || x.gflops != y.gflops || x.neoVersion != y.neoVersion ||
        x.trials != y.trials || x.verified != y.verified)
      return false;
  }
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 8192)
    return 0;
  std::string text(reinterpret_cast<const char *>(data), size);
  LoadOptions options;
  std::vector<Diagnostic> diagnostics;
  RecordSet records = parseRecords(text, "fuzz.json", options, diagnostics);

  std::string printed = printRecords(records);
  std::vector<Diagnostic> again;
  RecordSet reparsed = parseRecords(printed, "printed.json", options, again);
  if (!again.empty())
    neo_fuzz::fuzzAbort("printed records do not parse back cleanly: " + again[0].message +
                            "\nprinted:\n" + printed,
                        text);
  if (!sameRecords(records.sorted(), reparsed.sorted()))
    neo_fuzz::fuzzAbort("printed records parse back differently:\n" + printed, text);
  return 0;
}
