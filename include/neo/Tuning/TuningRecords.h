//===- TuningRecords.h - Measured schedules kept as JSON --------*- C++ -*-===//
//
// A tuning record says which schedule was measured fastest for one op
// signature (its key) on one target. Records are kept in JSON files:
//
//   {"format": "neo-tuning-records", "version": 1, "records": [
//     {"key": "gemm f32 batch=1 m=1024 n=1024 k=1024 layout=mk,kn,mn",
//      "target": "x86_64-avx512-sapphirerapids/2threads",
//      "schedule": {"mr": 8, "nr": 32, "mc": 128, "nc": 512, "kc": 256, "threads": 2},
//      "time_ms": 8.7, "gflops": 246.8, "neo_version": "0.1",
//      "trials": 64, "verified": "interpreter"}]}
//
// Loading never fails hard: a file that is not JSON, has another format or
// version, or records with missing, ill-typed or out-of-range fields yield
// diagnostics, and the usable records are kept. Saving merges with the
// records already in the file (the fastest per key and target wins) and
// replaces the file atomically. See docs/schedules.md.
//
// Only the standard library and nlohmann_json are used here (no LLVM), and
// no exception escapes.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_TUNING_TUNINGRECORDS_H
#define NEO_TUNING_TUNINGRECORDS_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace neo {
namespace tuning {

/// The version of Neo written into records.
extern const char *const kNeoVersion;
/// The `format` and `version` of record files.
extern const char *const kRecordsFormat;
constexpr int kRecordsVersion = 1;

/// The integer parameters of a schedule by field name ("mr", "vector", ...).
using ScheduleFields = std::map<std::string, int64_t>;

struct Record {
  std::string key;         // the op signature, e.g. GemmProblem::key()
  std::string target;      // see hostTarget()
  ScheduleFields schedule; // the fields of the schedule attribute
  double timeMs = 0;       // median time of one run of the op
  double gflops = 0;       // 0 when unknown
  std::string neoVersion;
  int64_t trials = 0;   // candidates measured (0: unknown)
  std::string verified; // how the schedule was checked ("" when unknown)
};

struct Diagnostic {
  enum class Severity { Warning, Note };
  Severity severity = Severity::Warning;
  std::string message;
};

/// Checks the schedule of a record (field names and ranges, in the light of
/// its key): returns "" when it is usable, else the reason.
using Validator = std::function<std::string(const Record &)>;

/// Records with at most one (the fastest) per key and target.
class RecordSet {
public:
  /// Adds `record` unless a record for its key and target is as fast or
  /// faster. Returns whether it was added.
  bool add(const Record &record);
  /// The record for `key` on `target`, or null.
  const Record *lookup(const std::string &key, const std::string &target) const;
  /// The records, sorted by target and key.
  std::vector<Record> sorted() const;
  size_t size() const { return records.size(); }
  bool empty() const { return records.empty(); }

private:
  std::map<std::pair<std::string, std::string>, Record> records; // (target, key)
};

/// The default limit on the size of a records file (64 MiB: a records file
/// holds a few hundred bytes per op).
constexpr uint64_t kDefaultMaxRecordsFileBytes = uint64_t(64) << 20;

struct LoadOptions {
  /// Keep only records for this target ("" keeps every target). Records for
  /// other targets are reported as notes.
  std::string target;
  /// Checks each record's schedule (optional).
  Validator validate;
  /// A larger file (or a device such as /dev/zero that never ends) is not
  /// read: a warning "PATH: the file is larger than the limit of N bytes".
  uint64_t maxFileBytes = kDefaultMaxRecordsFileBytes;
};

/// Parses the text of a records file named `name` (used in diagnostics).
RecordSet parseRecords(const std::string &text, const std::string &name, const LoadOptions &options,
                       std::vector<Diagnostic> &diagnostics);

/// Reads and parses `path`. A file that cannot be read is a warning.
RecordSet loadRecords(const std::string &path, const LoadOptions &options,
                      std::vector<Diagnostic> &diagnostics);

/// What a schedule-selection pass keeps of `path` (the CPU's and the GPU's
/// alike): its usable records, or null when there are none, each warning
/// given to `warn`.
std::shared_ptr<const RecordSet>
loadUsableRecords(const std::string &path, const LoadOptions &options,
                  const std::function<void(const std::string &)> &warn);

/// The JSON text of a records file holding `records`.
std::string printRecords(const RecordSet &records);

/// Merges `records` into the file at `path` and writes the result
/// atomically: a temporary file in the same directory renamed over `path`,
/// under an advisory lock on `path`.lock so that concurrent savers do not
/// lose records. The file's well-formed records for every target are kept
/// unless `records` has a faster one for the same key and target (schedules
/// are not validated here: records of other targets or tools pass through).
/// A file that exists but is not a records file of this version is kept as
/// `path`.bak. An existing file larger than kDefaultMaxRecordsFileBytes is
/// an error (it is not replaced). Problems with the old file go to `diagnostics`; returns false
/// with `error` when the file cannot be written.
bool saveRecords(const std::string &path, const RecordSet &records,
                 std::vector<Diagnostic> &diagnostics, std::string &error);

} // namespace tuning
} // namespace neo
} // namespace mlir

#endif // NEO_TUNING_TUNINGRECORDS_H
