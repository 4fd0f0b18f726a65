//===- TuningFuzzer.cpp - Fuzz tuning records and their validation --------===//
//
// Input: the text of a tuning-records file (up to scripts/fuzz.sh's
// -max_len, 64 KB). Reads it the way the tools do, and checks:
//  - parseRecords never fails hard (bad records become diagnostics), and the
//    records it keeps print and parse back to the same records;
//  - with the validator of neo-tile, neo-run and the pipelines
//    (validateScheduleRecord), every record it keeps is one that neo-tile
//    can apply: its fields give a valid GemmSchedule (for the vector width of
//    its key's element type) or GenericSchedule, and the `neo.schedule`
//    attribute made from them (#neo.cpu_gemm) reads back to the
//    same fields;
//  - keeping one target keeps only that target's records;
//  - saveRecords over a file holding the input keeps each saved record (or
//    a faster one), and what it writes loads without warnings (for inputs
//    with usable records, and one in eight others: files are slow).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "neo/Codegen/Schedules/ScheduleRules.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "neo/Codegen/CPU/Schedule.h"
#include "neo/Codegen/CPU/ScheduleRecords.h"
#include "neo/Tuning/TuningRecords.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using mlir::DictionaryAttr;
using mlir::FailureOr;
using mlir::MLIRContext;
using namespace mlir::neo;
using tuning::Diagnostic;
using tuning::LoadOptions;
using tuning::Record;
using tuning::RecordSet;

static bool sameRecord(const Record &x, const Record &y) {
  return x.key == y.key && x.target == y.target && x.schedule == y.schedule &&
         x.timeMs == y.timeMs && x.gflops == y.gflops && x.neoVersion == y.neoVersion &&
         x.trials == y.trials && x.verified == y.verified;
}

static bool sameRecords(const std::vector<Record> &a, const std::vector<Record> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameRecord(a[i], b[i]))
      return false;
  return true;
}

static std::string firstWarning(const std::vector<Diagnostic> &diagnostics) {
  for (const Diagnostic &d : diagnostics)
    if (d.severity == Diagnostic::Severity::Warning)
      return d.message;
  return "";
}

/// What neo-tile does with a validated record: a schedule from its fields,
/// and the `neo.schedule` attribute that carries it.
static void requireApplicable(const Record &record, MLIRContext *ctx, llvm::StringRef input) {
  llvm::StringRef key = record.key;
  std::string error;
  if (key.starts_with("gemm ")) {
    int64_t vectorWidth = key.drop_front(5).split(' ').first == "f64" ? 8 : 16;
    FailureOr<GemmSchedule> s = gemmScheduleFromFields(record.schedule, vectorWidth, error);
    if (mlir::failed(s))
      neo_fuzz::fuzzAbort("a validated GEMM record has no schedule: " + error, input);
    // The typed attribute neo-select-schedules attaches, read back as neo-tile does.
    auto attr = mlir::dyn_cast<mlir::neo::CpuGemmScheduleAttr>(scheduleAttr(ctx, *s));
    if (!attr)
      neo_fuzz::fuzzAbort("the neo.schedule of a validated GEMM record is not a cpu_gemm", input);
    GemmSchedule back = attr.getParams();
    if (toFields(back) != record.schedule ||
        !mlir::neo::schedules::checkCpuGemm(back, vectorWidth).empty())
      neo_fuzz::fuzzAbort("the neo.schedule of a validated GEMM record reads back differently",
                          input);
    return;
  }
  FailureOr<GenericSchedule> s = genericScheduleFromFields(record.schedule, error);
  if (mlir::failed(s))
    neo_fuzz::fuzzAbort("a validated generic record has no schedule: " + error, input);
  // neo-tile's own check of the schedules it applies.
  if (!mlir::neo::schedules::checkCpuGeneric({s->vectorSize, s->threads}).empty())
    neo_fuzz::fuzzAbort("a validated generic record fails neo-tile's schedule check", input);
  if (toFields(*s) != record.schedule)
    neo_fuzz::fuzzAbort("a validated generic record's fields do not round-trip", input);
}

/// A directory of this process for saveRecords (removed at exit).
static const std::string &scratchDir() {
  static std::string dir = [] {
    char name[] = "/tmp/neo-tuning-fuzzer-XXXXXX";
    if (!mkdtemp(name))
      neo_fuzz::fuzzAbort("cannot make a scratch directory");
    std::string d = name;
    static std::string removeAtExit = d;
    std::atexit([] {
      for (const char *suffix : {"/records.json", "/records.json.lock", "/records.json.bak"})
        std::remove((removeAtExit + suffix).c_str());
      std::remove(removeAtExit.c_str());
    });
    return d;
  }();
  return dir;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  llvm::StringRef input = text;
  static MLIRContext *ctx = [] {
    auto *c = new MLIRContext(MLIRContext::Threading::DISABLED);
    c->loadDialect<mlir::neo::NeoDialect>(); // the typed schedule attributes
    return c;
  }();

  // 1. Unvalidated, as saveRecords reads files: print and parse back.
  LoadOptions plain;
  std::vector<Diagnostic> diagnostics;
  RecordSet records = tuning::parseRecords(text, "fuzz.json", plain, diagnostics);
  std::string printed = tuning::printRecords(records);
  std::vector<Diagnostic> again;
  RecordSet reparsed = tuning::parseRecords(printed, "printed.json", plain, again);
  if (!again.empty())
    neo_fuzz::fuzzAbort("printed records do not parse back cleanly: " + again[0].message +
                            "\nprinted:\n" + printed,
                        input);
  if (!sameRecords(records.sorted(), reparsed.sorted()))
    neo_fuzz::fuzzAbort("printed records parse back differently:\n" + printed, input);

  // 2. Validated, as neo-tile (tuning-records=, records=) and neo-run read
  // them: what is kept must be applicable, and a subset of the records.
  LoadOptions validated;
  validated.validate = validateScheduleRecord;
  std::vector<Diagnostic> validationDiagnostics;
  RecordSet usable = tuning::parseRecords(text, "fuzz.json", validated, validationDiagnostics);
  for (const Record &r : usable.sorted()) {
    std::string reason = validateScheduleRecord(r);
    if (!reason.empty())
      neo_fuzz::fuzzAbort("a kept record does not validate: " + reason, input);
    requireApplicable(r, ctx, input);
    const Record *same = records.lookup(r.key, r.target);
    if (!same || same->timeMs > r.timeMs)
      neo_fuzz::fuzzAbort("validation kept a record that parsing alone does not", input);
  }

  // 3. One target, as neo-tile keeps the records of `target` (or the host).
  std::vector<Record> all = records.sorted();
  if (!all.empty()) {
    LoadOptions one = validated;
    one.target = all[size % all.size()].target;
    std::vector<Diagnostic> oneDiagnostics;
    RecordSet kept = tuning::parseRecords(text, "fuzz.json", one, oneDiagnostics);
    for (const Record &r : kept.sorted())
      if (r.target != one.target)
        neo_fuzz::fuzzAbort("a record of another target was kept", input);
  }

  // 4. neo-tune's save: merge the usable records into a file that holds the
  // input, then read the file back. (Files are slow: only for inputs with
  // usable records, and one in eight others.)
  if (usable.empty() && size % 8 != 0)
    return 0;
  std::string path = scratchDir() + "/records.json";
  {
    std::ofstream os(path, std::ios::binary | std::ios::trunc);
    os << text;
  }
  std::vector<Diagnostic> saveDiagnostics;
  std::string error;
  if (!saveRecords(path, usable, saveDiagnostics, error))
    neo_fuzz::fuzzAbort("saveRecords failed in a writable directory: " + error, input);
  std::vector<Diagnostic> loadDiagnostics;
  RecordSet saved = tuning::loadRecords(path, plain, loadDiagnostics);
  std::string warning = firstWarning(loadDiagnostics);
  if (!warning.empty())
    neo_fuzz::fuzzAbort("a saved file loads with a warning: " + warning, input);
  for (const Record &r : usable.sorted()) {
    const Record *s = saved.lookup(r.key, r.target);
    if (!s || s->timeMs > r.timeMs)
      neo_fuzz::fuzzAbort("saveRecords lost a record (or kept a slower one): " + r.key, input);
  }
  return 0;
}
