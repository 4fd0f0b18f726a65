//===- TuningRecordsTest.cpp - Records files: round trip, damage, merging --===//
#include "neo/Tuning/TuningRecords.h"
#include "neo/Codegen/CPU/ScheduleRecords.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <fstream>
#include <sstream>

using namespace mlir::neo;
using namespace mlir::neo::tuning;

namespace {

const char *kKey = "gemm f32 batch=1 m=64 n=64 k=64 layout=mk,kn,mn";
const char *kGenericKey =
    "generic f32 linalg.generic loops=64x100 iterators=pp sig=0011223344556677";

Record gemmRecord(double timeMs, int64_t mr = 8, const std::string &target = "t/2threads") {
  Record r;
  r.key = kKey;
  r.target = target;
  r.schedule = {{"mr", mr}, {"nr", 32}, {"mc", 64}, {"nc", 64}, {"kc", 64}, {"threads", 2}};
  r.timeMs = timeMs;
  r.gflops = 2.0 * 64 * 64 * 64 / (timeMs * 1e6);
  r.neoVersion = kNeoVersion;
  r.trials = 12;
  r.verified = "interpreter";
  return r;
}

/// A file's text with one record, `body` spliced in as its fields.
std::string fileWith(const std::string &records, int version = 1,
                     const std::string &format = "neo-tuning-records") {
  return "{\"format\": \"" + format + "\", \"version\": " + std::to_string(version) +
         ", \"records\": [" + records + "]}";
}

std::string recordText(const std::string &schedule, const std::string &extra = "",
                       const std::string &target = "t/2threads") {
  return "{\"key\": \"" + std::string(kKey) + "\", \"target\": \"" + target +
         "\", \"schedule\": " + schedule + ", \"time_ms\": 1.5" + extra + "}";
}

const char *kGoodSchedule =
    "{\"mr\": 4, \"nr\": 16, \"mc\": 32, \"nc\": 64, \"kc\": 40, \"threads\": 1}";

LoadOptions forTarget(const std::string &target = "t/2threads") {
  LoadOptions options;
  options.target = target;
  options.validate = validateScheduleRecord;
  return options;
}

size_t countWarnings(const std::vector<Diagnostic> &diagnostics) {
  size_t n = 0;
  for (const Diagnostic &d : diagnostics)
    n += d.severity == Diagnostic::Severity::Warning;
  return n;
}

std::string allMessages(const std::vector<Diagnostic> &diagnostics) {
  std::string s;
  for (const Diagnostic &d : diagnostics)
    s += d.message + "\n";
  return s;
}

/// A fresh directory for files of one test.
std::string tempDir() {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("neo-records-test", dir));
  return std::string(dir);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path);
  out << text;
}

TEST(TuningRecords, RoundTrip) {
  RecordSet set;
  set.add(gemmRecord(2.0));
  Record generic;
  generic.key = kGenericKey;
  generic.target = "t/2threads";
  generic.schedule = {{"vector", 8}, {"threads", 1}};
  generic.timeMs = 0.25;
  set.add(generic);
  std::vector<Diagnostic> diagnostics;
  RecordSet back = parseRecords(printRecords(set), "mem", forTarget(), diagnostics);
  EXPECT_TRUE(diagnostics.empty()) << allMessages(diagnostics);
  ASSERT_EQ(back.size(), 2u);
  const Record *r = back.lookup(kKey, "t/2threads");
  ASSERT_TRUE(r);
  Record want = gemmRecord(2.0);
  EXPECT_EQ(r->schedule, want.schedule);
  EXPECT_DOUBLE_EQ(r->timeMs, 2.0);
  EXPECT_DOUBLE_EQ(r->gflops, want.gflops);
  EXPECT_EQ(r->neoVersion, kNeoVersion);
  EXPECT_EQ(r->trials, 12);
  EXPECT_EQ(r->verified, "interpreter");
  const Record *g = back.lookup(kGenericKey, "t/2threads");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->schedule, generic.schedule);
  EXPECT_FALSE(back.lookup(kKey, "other"));
}

TEST(TuningRecords, CorruptFilesAreReportedNotFatal) {
  for (std::string text : {std::string("{\"format\": "), std::string(""), std::string("[1, 2"),
                           std::string("\x01\x02\xff\xfe garbage"),
                           std::string("{\"format\": \"neo-tuning-records\", \"version\": 1, "
                                       "\"records\": [\"\xc3\x28\"]}"),
                           std::string("nul\0l", 5)}) {
    std::vector<Diagnostic> diagnostics;
    RecordSet set = parseRecords(text, "bad.json", forTarget(), diagnostics);
    EXPECT_TRUE(set.empty());
    ASSERT_EQ(countWarnings(diagnostics), 1u) << text;
    EXPECT_NE(diagnostics[0].message.find("bad.json: not a valid JSON file"), std::string::npos)
        << diagnostics[0].message;
  }
}

TEST(TuningRecords, WrongFormatOrVersionIsIgnored) {
  std::string records = recordText(kGoodSchedule);
  struct Case {
    std::string text, expected;
  } cases[] = {
      {fileWith(records, 2), "unsupported version 2"},
      {fileWith(records, 0), "unsupported version 0"},
      {fileWith(records, 1, "something-else"), "'format' is not"},
      {"{\"format\": \"neo-tuning-records\", \"version\": \"1\", \"records\": []}",
       "unsupported version \"1\""},
      {"{\"format\": \"neo-tuning-records\", \"version\": 1}", "'records' is missing"},
      {"{\"format\": \"neo-tuning-records\", \"version\": 1, \"records\": {}}",
       "'records' is missing or not an array"},
      {"[]", "the top level is an array"},
  };
  for (const Case &c : cases) {
    std::vector<Diagnostic> diagnostics;
    RecordSet set = parseRecords(c.text, "f.json", forTarget(), diagnostics);
    EXPECT_TRUE(set.empty()) << c.text;
    ASSERT_EQ(diagnostics.size(), 1u) << c.text;
    EXPECT_NE(diagnostics[0].message.find(c.expected), std::string::npos) << diagnostics[0].message;
  }
}

TEST(TuningRecords, RecordsForOtherTargetsAreNotedAndIgnored) {
  std::string text = fileWith(recordText(kGoodSchedule, "", "t/2threads") + "," +
                              recordText(kGoodSchedule, "", "elsewhere/8threads"));
  std::vector<Diagnostic> diagnostics;
  RecordSet set = parseRecords(text, "f.json", forTarget(), diagnostics);
  EXPECT_EQ(set.size(), 1u);
  EXPECT_TRUE(set.lookup(kKey, "t/2threads"));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].severity, Diagnostic::Severity::Note);
  EXPECT_NE(diagnostics[0].message.find("is for target 'elsewhere/8threads'"), std::string::npos);
  // Every target when none is asked for.
  diagnostics.clear();
  EXPECT_EQ(parseRecords(text, "f.json", forTarget(""), diagnostics).size(), 2u);
  EXPECT_TRUE(diagnostics.empty());
}

TEST(TuningRecords, BadRecordsAreIgnoredAndTheRestUsed) {
  struct Case {
    std::string record, expected;
  } cases[] = {
      {recordText("{\"mr\": 0, \"nr\": 16, \"mc\": 32, \"nc\": 64, \"kc\": 40, \"threads\": 1}"),
       "invalid schedule: the register tile"},
      {recordText("{\"mr\": 4, \"nr\": 17, \"mc\": 32, \"nc\": 64, \"kc\": 40, \"threads\": 1}"),
       "invalid schedule: the register tile"},
      {recordText("{\"mr\": 16, \"nr\": 32, \"mc\": 32, \"nc\": 64, \"kc\": 40, \"threads\": 1}"),
       "more than 30 vector registers"},
      {recordText("{\"mr\": 4, \"nr\": 16, \"mc\": 30, \"nc\": 64, \"kc\": 40, \"threads\": 1}"),
       "multiples of the register tile"},
      {recordText("{\"mr\": 4, \"nr\": 16, \"mc\": 32, \"nc\": 64, \"kc\": 40, \"threads\": 1000}"),
       "threads must be between 1 and 256"},
      {recordText("{\"mr\": 4, \"nr\": 16, \"mc\": 32, \"nc\": 64, \"kc\": 40}"),
       "missing schedule field 'threads'"},
      {recordText("{\"mr\": 4, \"nr\": 16, \"mc\": 32, \"nc\": 64, \"kc\": 40, \"threads\": 1, "
                  "\"unroll\": 2}"),
       "unknown schedule field 'unroll'"},
      {recordText(
           "{\"mr\": \"4\", \"nr\": 16, \"mc\": 32, \"nc\": 64, \"kc\": 40, \"threads\": 1}"),
       "schedule field 'mr' is a string, not an integer"},
      {recordText("{\"mr\": 4.5, \"nr\": 16, \"mc\": 32, \"nc\": 64, \"kc\": 40, \"threads\": 1}"),
       "schedule field 'mr' is a number with a fraction"},
      {recordText("{\"mr\": 18446744073709551615, \"nr\": 16, \"mc\": 32, \"nc\": 64, \"kc\": 40, "
                  "\"threads\": 1}"),
       "schedule field 'mr' is an integer out of range"},
      {recordText("{\"mr\": -9223372036854775808, \"nr\": 16, \"mc\": 32, \"nc\": 64, \"kc\": 40, "
                  "\"threads\": 1}"),
       "invalid schedule"},
      {recordText("[4, 16]"), "'schedule' is an array, not an object"},
      {"{\"key\": \"k\", \"target\": \"t/2threads\", \"time_ms\": 1}", "has no 'schedule'"},
      {"{\"target\": \"t/2threads\", \"schedule\": {}, \"time_ms\": 1}", "has no 'key'"},
      {"{\"key\": \"\", \"target\": \"t/2threads\", \"schedule\": {}, \"time_ms\": 1}",
       "'key' must be a non-empty string"},
      {"{\"key\": \"k\", \"target\": 3, \"schedule\": {}, \"time_ms\": 1}",
       "'target' must be a non-empty string"},
      {"{\"key\": \"" + std::string(kKey) +
           "\", \"target\": \"t/2threads\", \"schedule\": " + kGoodSchedule + "}",
       "has no 'time_ms'"},
      {"{\"key\": \"" + std::string(kKey) +
           "\", \"target\": \"t/2threads\", \"schedule\": " + kGoodSchedule + ", \"time_ms\": -1}",
       "'time_ms' must be a positive number"},
      {"{\"key\": \"" + std::string(kKey) + "\", \"target\": \"t/2threads\", \"schedule\": " +
           kGoodSchedule + ", \"time_ms\": \"fast\"}",
       "'time_ms' must be a positive number"},
      {recordText(kGoodSchedule, ", \"gflops\": -3"), "'gflops' must be a non-negative number"},
      {recordText(kGoodSchedule, ", \"trials\": 1.5"), "'trials' must be a non-negative integer"},
      {recordText(kGoodSchedule, ", \"neo_version\": 1"), "'neo_version' must be a string"},
      {"{\"key\": \"conv weird\", \"target\": \"t/2threads\", \"schedule\": {}, \"time_ms\": 1}",
       "neither a 'gemm' nor a 'generic' signature"},
      {"{\"key\": \"gemm f16 batch=1 m=1 n=1 k=1 layout=mk,kn,mn\", \"target\": \"t/2threads\", "
       "\"schedule\": " +
           std::string(kGoodSchedule) + ", \"time_ms\": 1}",
       "no schedule for element type 'f16'"},
      {"{\"key\": \"" + std::string(kGenericKey) +
           "\", \"target\": \"t/2threads\", \"schedule\": {\"vector\": 0, \"threads\": 1}, "
           "\"time_ms\": 1}",
       "vector must be between 1 and 64"},
      {"{\"key\": \"" + std::string(kGenericKey) +
           "\", \"target\": \"t/2threads\", \"schedule\": " + kGoodSchedule + ", \"time_ms\": 1}",
       "missing schedule field 'vector'"},
      {"42", "record #0 is an integer, not an object"},
  };
  for (const Case &c : cases) {
    // The bad record comes first; a good one for another key follows.
    std::string good = "{\"key\": \"" + std::string(kGenericKey) +
                       "\", \"target\": \"t/2threads\", \"schedule\": {\"vector\": 8, "
                       "\"threads\": 2}, \"time_ms\": 0.5}";
    std::vector<Diagnostic> diagnostics;
    RecordSet set =
        parseRecords(fileWith(c.record + "," + good), "f.json", forTarget(), diagnostics);
    EXPECT_EQ(set.size(), 1u) << c.record;
    EXPECT_TRUE(set.lookup(kGenericKey, "t/2threads")) << c.record;
    ASSERT_EQ(diagnostics.size(), 1u) << c.record;
    EXPECT_EQ(diagnostics[0].severity, Diagnostic::Severity::Warning);
    EXPECT_NE(diagnostics[0].message.find(c.expected), std::string::npos) << diagnostics[0].message;
    EXPECT_NE(diagnostics[0].message.find("record #0"), std::string::npos);
  }
}

TEST(TuningRecords, DuplicatesKeepTheFastest) {
  std::string text =
      fileWith("{\"key\": \"k\", \"target\": \"t\", \"schedule\": {\"a\": 1}, \"time_ms\": 3},"
               "{\"key\": \"k\", \"target\": \"t\", \"schedule\": {\"a\": 2}, \"time_ms\": 1},"
               "{\"key\": \"k\", \"target\": \"t\", \"schedule\": {\"a\": 3}, \"time_ms\": 2}");
  std::vector<Diagnostic> diagnostics;
  RecordSet set = parseRecords(text, "f.json", LoadOptions(), diagnostics);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set.lookup("k", "t")->schedule.at("a"), 2);
}

TEST(TuningRecords, SavingMergesAndKeepsTheBest) {
  std::string dir = tempDir();
  std::string path = dir + "/records.json";
  std::vector<Diagnostic> diagnostics;
  std::string error;
  auto save = [&](const Record &r) {
    RecordSet set;
    set.add(r);
    return saveRecords(path, set, diagnostics, error);
  };
  Record other = gemmRecord(5.0, 4, "other/1threads");
  ASSERT_TRUE(save(gemmRecord(2.0, 8))) << error;
  ASSERT_TRUE(save(other)) << error;
  ASSERT_TRUE(save(gemmRecord(1.0, 2))) << error; // faster: replaces
  ASSERT_TRUE(save(gemmRecord(3.0, 4))) << error; // slower: dropped
  EXPECT_TRUE(diagnostics.empty()) << allMessages(diagnostics);

  RecordSet all = loadRecords(path, forTarget(""), diagnostics);
  EXPECT_TRUE(diagnostics.empty()) << allMessages(diagnostics);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.lookup(kKey, "t/2threads")->schedule.at("mr"), 2);
  EXPECT_DOUBLE_EQ(all.lookup(kKey, "t/2threads")->timeMs, 1.0);
  EXPECT_EQ(all.lookup(kKey, "other/1threads")->schedule.at("mr"), 4);

  // Nothing but the file and its lock is left behind.
  std::error_code ec;
  std::vector<std::string> names;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"records.json", "records.json.lock"}));
  llvm::sys::fs::remove_directories(dir);
}

TEST(TuningRecords, SavingOverACorruptFileKeepsABackup) {
  std::string dir = tempDir();
  std::string path = dir + "/records.json";
  writeFile(path, "{\"format\": \"neo-tuning-records\", \"version\": 1, \"records\": [");
  RecordSet set;
  set.add(gemmRecord(2.0));
  std::vector<Diagnostic> diagnostics;
  std::string error;
  ASSERT_TRUE(saveRecords(path, set, diagnostics, error)) << error;
  EXPECT_EQ(countWarnings(diagnostics), 2u) << allMessages(diagnostics);
  EXPECT_EQ(readFile(path + ".bak"),
            "{\"format\": \"neo-tuning-records\", \"version\": 1, \"records\": [");
  diagnostics.clear();
  EXPECT_EQ(loadRecords(path, forTarget(), diagnostics).size(), 1u);
  EXPECT_TRUE(diagnostics.empty()) << allMessages(diagnostics);
  llvm::sys::fs::remove_directories(dir);
}

// Issue 18: a records file is read within a limit (NEO_TUNING_RECORDS=/dev/zero
// was read until memory ran out); a larger file is a warning, and ignored.
TEST(TuningRecords, FileSizeLimit) {
  std::string dir = tempDir();
  std::string path = dir + "/records.json";
  RecordSet set;
  set.add(gemmRecord(2.0));
  std::vector<Diagnostic> diagnostics;
  std::string error;
  ASSERT_TRUE(saveRecords(path, set, diagnostics, error)) << error;
  LoadOptions options = forTarget();
  EXPECT_EQ(loadRecords(path, options, diagnostics).size(), 1u);
  options.maxFileBytes = 16;
  diagnostics.clear();
  EXPECT_TRUE(loadRecords(path, options, diagnostics).empty());
  ASSERT_EQ(countWarnings(diagnostics), 1u);
  EXPECT_EQ(diagnostics[0].message,
            path + ": cannot read the tuning records: the file is larger than the limit of 16 "
                   "bytes");
  EXPECT_EQ(kDefaultMaxRecordsFileBytes, uint64_t(64) << 20);
  llvm::sys::fs::remove_directories(dir);
}

TEST(TuningRecords, UnwritableOrMissingFilesAreErrorsNotCrashes) {
  RecordSet set;
  set.add(gemmRecord(2.0));
  std::vector<Diagnostic> diagnostics;
  std::string error;
  EXPECT_FALSE(saveRecords("/nonexistent-dir/records.json", set, diagnostics, error));
  EXPECT_FALSE(error.empty());
  RecordSet none = loadRecords("/nonexistent-dir/records.json", forTarget(), diagnostics);
  EXPECT_TRUE(none.empty());
  ASSERT_EQ(countWarnings(diagnostics), 1u);
  EXPECT_NE(diagnostics[0].message.find("cannot read"), std::string::npos);
}

} // namespace
