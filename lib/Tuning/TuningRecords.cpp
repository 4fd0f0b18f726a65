//===- TuningRecords.cpp - Measured schedules kept as JSON ----------------===//
//
// Built with -fno-exceptions: nlohmann_json is only called in ways that
// cannot throw (parse without exceptions, type checks before every get,
// dump with invalid UTF-8 replaced).
//
//===----------------------------------------------------------------------===//
#include "neo/Tuning/TuningRecords.h"
#include "neo/Support/FileIO.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir::neo::tuning;
using json = nlohmann::json;
using mlir::neo::AtomicWriteOptions;
using mlir::neo::readWholeFile;
using mlir::neo::Status;
using mlir::neo::writeFileAtomically;
using ordered_json = nlohmann::ordered_json;

const char *const mlir::neo::tuning::kNeoVersion = "0.1";
const char *const mlir::neo::tuning::kRecordsFormat = "neo-tuning-records";

//===----------------------------------------------------------------------===//
// RecordSet
//===----------------------------------------------------------------------===//

bool RecordSet::add(const Record &record) {
  auto [it, inserted] = records.try_emplace({record.target, record.key}, record);
  if (inserted)
    return true;
  if (!(record.timeMs < it->second.timeMs))
    return false;
  it->second = record;
  return true;
}

const Record *RecordSet::lookup(const std::string &key, const std::string &target) const {
  auto it = records.find({target, key});
  return it == records.end() ? nullptr : &it->second;
}

std::vector<Record> RecordSet::sorted() const {
  std::vector<Record> out;
  out.reserve(records.size());
  for (const auto &entry : records)
    out.push_back(entry.second);
  return out;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

/// A SAX handler that only keeps the first syntax error (nlohmann reports
/// errors to the handler instead of throwing).
struct ErrorCollector : nlohmann::json_sax<json> {
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    message = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, ...": drop the tag.
    if (!message.empty() && message.front() == '[') {
      size_t close = message.find("] ");
      if (close != std::string::npos)
        message = message.substr(close + 2);
    }
    return false;
  }
};

std::string describeSyntaxError(const std::string &text) {
  ErrorCollector collector;
  json::sax_parse(text, &collector, json::input_format_t::json, /*strict=*/true);
  return collector.message.empty() ? "syntax error" : collector.message;
}

std::string typeName(const json &v) {
  if (v.is_number_integer())
    return "an integer";
  if (v.is_number_float())
    return "a number with a fraction";
  if (v.is_string())
    return "a string";
  if (v.is_boolean())
    return "a boolean";
  if (v.is_null())
    return "null";
  if (v.is_array())
    return "an array";
  if (v.is_object())
    return "an object";
  return "something else";
}

/// A finite JSON number as a double.
bool getNumber(const json &v, double &out) {
  if (!v.is_number())
    return false;
  out = v.is_number_integer()
            ? (v.is_number_unsigned() ? double(v.get<uint64_t>()) : double(v.get<int64_t>()))
            : v.get<double>();
  return std::isfinite(out);
}

/// A JSON integer that fits int64_t.
bool getInteger(const json &v, int64_t &out) {
  if (!v.is_number_integer())
    return false;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > uint64_t(std::numeric_limits<int64_t>::max()))
      return false;
    out = int64_t(u);
    return true;
  }
  out = v.get<int64_t>();
  return true;
}

/// Reads one record; returns "" or why it is unusable.
std::string readRecord(const json &r, Record &out) {
  if (!r.is_object())
    return "is " + typeName(r) + ", not an object";
  auto requireString = [&](const char *name, std::string &field) -> std::string {
    auto it = r.find(name);
    if (it == r.end())
      return std::string("has no '") + name + "'";
    if (!it->is_string() || it->get_ref<const std::string &>().empty())
      return std::string("'") + name + "' must be a non-empty string";
    field = it->get<std::string>();
    return "";
  };
  if (std::string e = requireString("key", out.key); !e.empty())
    return e;
  if (std::string e = requireString("target", out.target); !e.empty())
    return e;

  auto schedule = r.find("schedule");
  if (schedule == r.end())
    return "has no 'schedule'";
  if (!schedule->is_object())
    return "'schedule' is " + typeName(*schedule) + ", not an object";
  for (auto it = schedule->begin(); it != schedule->end(); ++it) {
    int64_t value;
    if (!getInteger(it.value(), value))
      return "schedule field '" + it.key() + "' is " + typeName(it.value()) +
             (it.value().is_number_integer() ? " out of range" : ", not an integer");
    out.schedule[it.key()] = value;
  }

  auto time = r.find("time_ms");
  if (time == r.end())
    return "has no 'time_ms'";
  if (!getNumber(*time, out.timeMs) || !(out.timeMs > 0))
    return "'time_ms' must be a positive number";
  if (auto it = r.find("gflops"); it != r.end())
    if (!getNumber(*it, out.gflops) || out.gflops < 0)
      return "'gflops' must be a non-negative number";
  if (auto it = r.find("neo_version"); it != r.end()) {
    if (!it->is_string())
      return "'neo_version' must be a string";
    out.neoVersion = it->get<std::string>();
  }
  if (auto it = r.find("trials"); it != r.end())
    if (!getInteger(*it, out.trials) || out.trials < 0)
      return "'trials' must be a non-negative integer";
  if (auto it = r.find("verified"); it != r.end()) {
    if (!it->is_string())
      return "'verified' must be a string";
    out.verified = it->get<std::string>();
  }
  return "";
}

/// Parses `text`; `usable` tells whether the file as a whole was readable
/// (JSON of the right format and version).
RecordSet parse(const std::string &text, const std::string &name, const LoadOptions &options,
                std::vector<Diagnostic> &diagnostics, bool &usable) {
  RecordSet set;
  usable = false;
  auto warn = [&](const std::string &message) {
    diagnostics.push_back({Diagnostic::Severity::Warning, name + ": " + message});
  };
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    warn("not a valid JSON file (" + describeSyntaxError(text) + "); its records are ignored");
    return set;
  }
  if (!doc.is_object()) {
    warn("the top level is " + typeName(doc) + ", not an object; the file is ignored");
    return set;
  }
  auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() ||
      format->get_ref<const std::string &>() != kRecordsFormat) {
    warn(std::string("'format' is not \"") + kRecordsFormat + "\"; the file is ignored");
    return set;
  }
  auto version = doc.find("version");
  int64_t v = 0;
  if (version == doc.end() || !getInteger(*version, v) || v != kRecordsVersion) {
    warn("unsupported version " + (version == doc.end() ? std::string("(none)") : version->dump()) +
         " (this Neo reads version " + std::to_string(kRecordsVersion) + "); the file is ignored");
    return set;
  }
  auto list = doc.find("records");
  if (list == doc.end() || !list->is_array()) {
    warn("'records' is missing or not an array; the file is ignored");
    return set;
  }
  usable = true;
  for (size_t i = 0; i < list->size(); ++i) {
    Record record;
    std::string what = "record #" + std::to_string(i);
    std::string error = readRecord((*list)[i], record);
    if (!record.key.empty())
      what += " ('" + record.key + "')";
    if (!error.empty()) {
      warn(what + " " + error + "; ignored");
      continue;
    }
    if (!options.target.empty() && record.target != options.target) {
      diagnostics.push_back({Diagnostic::Severity::Note, name + ": " + what + " is for target '" +
                                                             record.target + "', not '" +
                                                             options.target + "'; ignored"});
      continue;
    }
    if (options.validate) {
      std::string invalid = options.validate(record);
      if (!invalid.empty()) {
        warn(what + " has an invalid schedule: " + invalid + "; ignored");
        continue;
      }
    }
    set.add(record);
  }
  return set;
}

/// Reads `path` (at most `maxBytes`); on failure `error` is the reason.
bool readFile(const std::string &path, std::string &text, std::string &error,
              uint64_t maxBytes = kDefaultMaxRecordsFileBytes) {
  if (Status s = readWholeFile(path, text, maxBytes); !s.ok()) {
    // "PATH: cannot read the file: REASON" or "PATH: the file is larger ...".
    error = s.message();
    const std::string prefix = path + ": cannot read the file: ";
    if (error.compare(0, prefix.size(), prefix) == 0)
      error = error.substr(prefix.size());
    else if (error.compare(0, path.size() + 2, path + ": ") == 0)
      error = error.substr(path.size() + 2);
    return false;
  }
  return true;
}

/// Writes `data` atomically and durably (NeoSupport's writer, with fsync).
bool writeAtomically(const std::string &path, const std::string &data, std::string &error) {
  AtomicWriteOptions options;
  options.sync = true;
  if (Status s = writeFileAtomically(path, {data}, options); !s.ok()) {
    error = s.message();
    return false;
  }
  return true;
}

} // namespace

RecordSet mlir::neo::tuning::parseRecords(const std::string &text, const std::string &name,
                                          const LoadOptions &options,
                                          std::vector<Diagnostic> &diagnostics) {
  bool usable;
  return parse(text, name, options, diagnostics, usable);
}

RecordSet mlir::neo::tuning::loadRecords(const std::string &path, const LoadOptions &options,
                                         std::vector<Diagnostic> &diagnostics) {
  std::string text, error;
  if (!readFile(path, text, error, options.maxFileBytes)) {
    diagnostics.push_back(
        {Diagnostic::Severity::Warning, path + ": cannot read the tuning records: " + error});
    return RecordSet();
  }
  return parseRecords(text, path, options, diagnostics);
}

//===----------------------------------------------------------------------===//
// Printing and saving
//===----------------------------------------------------------------------===//

std::string mlir::neo::tuning::printRecords(const RecordSet &records) {
  ordered_json list = ordered_json::array();
  for (const Record &r : records.sorted()) {
    // neo-tile's fields in their usual order, then any others.
    ordered_json schedule = ordered_json::object();
    for (const char *name : {"mr", "nr", "mc", "nc", "kc", "vector", "threads"})
      if (auto it = r.schedule.find(name); it != r.schedule.end())
        schedule[name] = it->second;
    for (const auto &[name, value] : r.schedule)
      if (!schedule.contains(name))
        schedule[name] = value;
    ordered_json entry = ordered_json::object();
    entry["key"] = r.key;
    entry["target"] = r.target;
    entry["schedule"] = std::move(schedule);
    entry["time_ms"] = r.timeMs;
    entry["gflops"] = r.gflops;
    entry["neo_version"] = r.neoVersion;
    if (r.trials > 0)
      entry["trials"] = r.trials;
    if (!r.verified.empty())
      entry["verified"] = r.verified;
    list.push_back(std::move(entry));
  }
  ordered_json doc = ordered_json::object();
  doc["format"] = kRecordsFormat;
  doc["version"] = kRecordsVersion;
  doc["records"] = std::move(list);
  return doc.dump(2, ' ', /*ensure_ascii=*/false, ordered_json::error_handler_t::replace) + "\n";
}

bool mlir::neo::tuning::saveRecords(const std::string &path, const RecordSet &records,
                                    std::vector<Diagnostic> &diagnostics, std::string &error) {
  // One saver at a time: read, merge and replace under the lock.
  std::string lockPath = path + ".lock";
  int lockFd = ::open(lockPath.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
  if (lockFd < 0) {
    error = "cannot open '" + lockPath + "': " + std::strerror(errno);
    return false;
  }
  while (::flock(lockFd, LOCK_EX) != 0 && errno == EINTR) {
  }
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); } // Closing releases the lock.
  } unlock{lockFd};

  RecordSet merged;
  std::string text, readError;
  if (::access(path.c_str(), F_OK) == 0) {
    if (!readFile(path, text, readError)) {
      error = "cannot read '" + path + "': " + readError;
      return false;
    }
    bool usable;
    merged = parse(text, path, LoadOptions(), diagnostics, usable);
    if (!usable && !text.empty()) {
      std::string backup = path + ".bak";
      std::string backupError;
      if (!writeAtomically(backup, text, backupError)) {
        error = backupError;
        return false;
      }
      diagnostics.push_back(
          {Diagnostic::Severity::Warning, path + ": its old content is kept in '" + backup + "'"});
    }
  }
  for (const Record &r : records.sorted())
    merged.add(r);
  return writeAtomically(path, printRecords(merged), error);
}

std::shared_ptr<const RecordSet>
mlir::neo::tuning::loadUsableRecords(const std::string &path, const LoadOptions &options,
                                     const std::function<void(const std::string &)> &warn) {
  std::vector<Diagnostic> diagnostics;
  auto set = std::make_shared<RecordSet>(loadRecords(path, options, diagnostics));
  for (const Diagnostic &d : diagnostics)
    if (d.severity == Diagnostic::Severity::Warning)
      warn(d.message);
  if (set->empty())
    return nullptr;
  return set;
}
