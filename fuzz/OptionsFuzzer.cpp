//===- OptionsFuzzer.cpp - Fuzz the options of Neo's passes and pipelines -===//
//
// Input: bytes read as choices (FuzzedDataProvider) that pick an IR module
// from a small corpus (neo functions embedded below, each also lowered part
// of the way: linalg on tensors, memrefs, scheduled loops, GPU launches and
// outlined gpu.modules, so that every pass finds IR it works on) and a
// textual pipeline of one to three of Neo's registered passes and pipelines
// with random options: `neo-tile{gemm-mr=0 threads=-1},neo-vectorize`. The
// passes and their options are enumerated from MLIR's pass registry (after
// registerNeoPasses), not listed here; values come from sets per option type
// (0, -1, huge, overflowing, nan, inf, empty, bogus strings, wrong lists) and
// sometimes from raw bytes. The pipeline is parsed with parsePassPipeline
// (implicit nesting, as neo-opt does) and run, verifying after every pass. A
// bad option must be a parse error or a pass failure with a diagnostic;
// never a crash, hang, sanitizer report or IR that does not verify.
//
// Options that name files are given safe values only (a scratch directory,
// missing paths): the fuzzer never writes outside its scratch directory.
//
// kKnownBugs lists the option values of known, not yet fixed bugs; inputs
// that hit one are skipped so that CI stays green until the fixes land.
// Delete an entry with its fix. To see the pipeline and IR of an input:
// `NEO_OPTIONS_FUZZER_PRINT=1 neo-options-fuzzer FILE` (the fuzz target
// reads the variable, no library does).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "neo/Frontend/Import.h"
#include "neo/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// Known bugs (skipped until fixed)
//===----------------------------------------------------------------------===//

/// Strips one level of quotes or braces, as the pass-option parser does.
std::string unquoted(llvm::StringRef value) {
  value = value.trim();
  if (value.size() >= 2 && ((value.front() == '"' && value.back() == '"') ||
                            (value.front() == '\'' && value.back() == '\'') ||
                            (value.front() == '{' && value.back() == '}')))
    value = value.drop_front().drop_back().trim();
  return value.str();
}

bool isNaN(llvm::StringRef value) {
  std::string v = unquoted(value);
  char *end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  return !v.empty() && std::isnan(d);
}

bool hasZeroElement(llvm::StringRef value) {
  llvm::SmallVector<llvm::StringRef> elements;
  llvm::StringRef(unquoted(value)).split(elements, ',');
  for (llvm::StringRef e : elements) {
    std::string s = e.trim().str();
    char *end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 0);
    if (!s.empty() && end != s.c_str() && v == 0)
      return true;
  }
  return false;
}

bool isEmpty(llvm::StringRef value) { return unquoted(value).empty(); }

struct KnownBug {
  const char *pass;
  const char *option;
  bool (*matches)(llvm::StringRef value);
  const char *what;
};

/// Known bugs that this fuzzer finds, fixed on other branches (issue 18).
/// An input whose pipeline sets one of these options to a matching value is
/// skipped. Remove an entry when its fix lands (the fuzzer then checks it).
const std::vector<KnownBug> kKnownBugs = {};

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

enum class OptionType { Bool, Integer, Number, String };

struct OptionInfo {
  std::string name;
  OptionType type = OptionType::Bool;
  std::vector<std::string> values; // enumerated values, if the help lists them
};

struct PassEntry {
  std::string name;
  std::vector<OptionInfo> options;
};

OptionType typeOf(llvm::StringRef spelled) {
  if (spelled.empty())
    return OptionType::Bool;
  if (spelled == "long" || spelled == "int" || spelled == "uint" || spelled == "ulong")
    return OptionType::Integer;
  if (spelled == "number" || spelled == "double" || spelled == "float")
    return OptionType::Number;
  return OptionType::String;
}

/// What printRegisteredPasses writes to stdout: the registered passes and
/// pipelines, each followed by its options, one a line.
std::string registryHelp() {
  llvm::outs().flush();
  std::fflush(stdout);
  char path[] = "/tmp/neo-options-fuzzer-help-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0)
    neo_fuzz::fuzzAbort("cannot make a temporary file");
  int saved = dup(1);
  dup2(fd, 1);
  printRegisteredPasses();
  llvm::outs().flush();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  close(fd);
  std::ifstream is(path);
  std::stringstream ss;
  ss << is.rdbuf();
  std::remove(path);
  return ss.str();
}

/// The passes and pipelines of the registry, with their options.
std::vector<PassEntry> enumerateRegistry() {
  std::vector<PassEntry> entries;
  std::string help = registryHelp();
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(help).split(lines, '\n');
  size_t passIndent = std::string::npos;
  for (llvm::StringRef line : lines) {
    size_t indent = line.find_first_not_of(' ');
    if (indent == llvm::StringRef::npos)
      continue;
    llvm::StringRef text = line.drop_front(indent);
    if (text.starts_with("=") && !entries.empty() && !entries.back().options.empty()) {
      // An enumerated value of the last option: `=value - description`.
      entries.back().options.back().values.push_back(text.drop_front().split(' ').first.str());
      continue;
    }
    if (!text.consume_front("--"))
      continue;
    llvm::StringRef spelled = text.split(' ').first;
    auto [name, type] = spelled.split('=');
    type = type.trim("<>");
    if (passIndent == std::string::npos || indent <= passIndent) {
      passIndent = indent;
      entries.push_back({name.str(), {}});
      continue;
    }
    if (!entries.empty())
      entries.back().options.push_back({name.str(), typeOf(type), {}});
  }
  return entries;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

const char *const kIntegers[] = {"0",
                                 "-1",
                                 "1",
                                 "2",
                                 "3",
                                 "4",
                                 "7",
                                 "8",
                                 "16",
                                 "31",
                                 "32",
                                 "64",
                                 "128",
                                 "256",
                                 "257",
                                 "1024",
                                 "65536",
                                 "2147483647",
                                 "2147483648",
                                 "-2147483648",
                                 "4294967296",
                                 "9223372036854775807",
                                 "-9223372036854775808",
                                 "9223372036854775808",
                                 "18446744073709551616",
                                 "0x10",
                                 "1e3",
                                 "",
                                 "abc",
                                 "-",
                                 "+5"};
const char *const kNumbers[] = {"0",     "-0",        "-1",     "0.001",   "1e-300", "1e300",
                                "1e309", "inf",       "-inf",   "nan",     "NaN",    "-nan",
                                "1e-9",  "5",         "0.2",    "",        "x",      "0x1p3",
                                "1,2",   "100000000", "-1e308", "4.9e-324"};
const char *const kBools[] = {"true", "false", "1", "0", "", "maybe", "TRUE", "-1"};
const char *const kStrings[] = {"",
                                "x",
                                "f0",
                                "f1",
                                "mm",
                                "{f}_grad",
                                "{f}",
                                "{f}{f}",
                                "@",
                                "a b",
                                "\"q\"",
                                "'q'",
                                "none",
                                "auto",
                                "tf32",
                                "cpu",
                                "gpu",
                                "greedy",
                                "dag",
                                "ilp",
                                "inline",
                                "horizontal",
                                "broadcast",
                                "factor",
                                "distribute",
                                "assoc",
                                "inline,assoc",
                                "bogus",
                                "linalg",
                                "bufferize",
                                "schedule",
                                "loops",
                                "outline",
                                "isa",
                                "bin",
                                "fatbin",
                                "sm_90",
                                "sm_80",
                                "sm_0",
                                "sm_",
                                "+ptx80",
                                "-ptx80",
                                "x86_64/1threads",
                                "{",
                                "}",
                                "{}",
                                ",",
                                "=",
                                "\\",
                                "\"",
                                "f0,f1",
                                "mm.main",
                                "0",
                                "-1"};
/// Options that name files read or written: only safe paths.
const char *const kFileOptions[] = {"report", "records", "tuning-records", "toolkit"};

/// The scratch directory (made on first use). Leaked, not a static string:
/// removeScratch runs at exit, after static strings made later are gone.
const std::string &scratchDir() {
  static const std::string *dir = [] {
    char name[] = "/tmp/neo-options-fuzzer-XXXXXX";
    if (!mkdtemp(name))
      neo_fuzz::fuzzAbort("cannot make a scratch directory");
    return new std::string(name);
  }();
  return *dir;
}

/// A tuning-records file in the scratch directory (valid records, one with
/// a schedule that validation rejects).
std::string recordsFile() {
  static const std::string *path = [] {
    auto *p = new std::string(scratchDir() + "/records.json");
    std::ofstream os(*p);
    os << R"({"format": "neo-tuning-records", "version": 1, "records": [
  {"key": "gemm f32 batch=1 m=8 n=8 k=8 layout=mk,kn,mn", "target": "x86_64/1threads",
   "schedule": {"mr": 4, "nr": 16, "mc": 8, "nc": 16, "kc": 8, "threads": 1}, "time_ms": 0.5},
  {"key": "gemm f32 batch=1 m=8 n=8 k=8 layout=mk,kn,mn", "target": "x86_64/2threads",
   "schedule": {"mr": 0, "nr": 15, "mc": 8, "nc": 16, "kc": 8, "threads": 1}, "time_ms": 0.5}]}
)";
    return p;
  }();
  return *path;
}

void removeScratch() {
  for (const char *f : {"/records.json", "/report.json"})
    std::remove((scratchDir() + f).c_str());
  std::remove(scratchDir().c_str());
}

class PipelineWriter {
public:
  PipelineWriter(FuzzedDataProvider &fdp, const std::vector<PassEntry> &registry)
      : fdp(fdp), registry(registry) {}

  /// The pipeline text, or "" when it hits a known bug.
  std::string pipeline() {
    std::string text;
    int passes = pick(1, 3);
    for (int p = 0; p < passes; ++p) {
      const PassEntry &pass = registry[pick(0, registry.size() - 1)];
      text += (p ? "," : "") + pass.name;
      int options = pass.options.empty() ? 0 : pick(0, std::min<int>(4, pass.options.size()));
      if (options == 0 && !chance(10))
        continue;
      text += "{";
      for (int o = 0; o < options; ++o) {
        const OptionInfo &option = pass.options[pick(0, pass.options.size() - 1)];
        std::string value = valueFor(pass.name, option);
        for (const KnownBug &bug : kKnownBugs)
          if (pass.name == bug.pass && option.name == bug.option && bug.matches(value))
            return "";
        text += (o ? " " : "") + option.name;
        if (option.type != OptionType::Bool || !value.empty() || chance(50))
          text += "=" + value;
      }
      if (chance(3))
        text += " no-such-option=1"; // an unknown option
      text += "}";
    }
    if (chance(2))
      text += fdp.ConsumeRandomLengthString(64); // trailing junk
    return text;
  }

private:
  FuzzedDataProvider &fdp;
  const std::vector<PassEntry> &registry;

  int pick(int lo, int hi) { return fdp.ConsumeIntegralInRange<int>(lo, hi); }
  bool chance(int percent) { return pick(0, 99) < percent; }
  template <size_t N> std::string oneOf(const char *const (&options)[N]) {
    return options[pick(0, N - 1)];
  }

  std::string scalar(const OptionInfo &option) {
    switch (option.type) {
    case OptionType::Bool: return oneOf(kBools);
    case OptionType::Integer: return chance(90) ? oneOf(kIntegers) : oneOf(kNumbers);
    case OptionType::Number: return chance(90) ? oneOf(kNumbers) : oneOf(kIntegers);
    case OptionType::String:
      if (!option.values.empty() && chance(60))
        return option.values[pick(0, option.values.size() - 1)];
      return oneOf(kStrings);
    }
    return "";
  }

  std::string valueFor(llvm::StringRef pass, const OptionInfo &option) {
    if (llvm::is_contained(kFileOptions, option.name)) {
      if (option.name == "report")
        return chance(50) ? "" : scratchDir() + "/report.json";
      if (option.name == "toolkit")
        return "/nonexistent/neo-fuzz-toolkit";
      switch (pick(0, 3)) {
      case 0: return "";
      case 1: return "/nonexistent/neo-fuzz-records.json";
      default: return recordsFile();
      }
    }
    if (chance(3))
      return fdp.ConsumeRandomLengthString(32); // raw bytes
    // Lists (and scalars given as lists): `a,b,c`.
    if (option.type == OptionType::Integer && chance(30)) {
      int n = pick(0, 8);
      std::string list;
      for (int i = 0; i < n; ++i)
        list += (i ? "," : "") + scalar(option);
      return list;
    }
    return scalar(option);
  }
};

//===----------------------------------------------------------------------===//
// The IR corpus
//===----------------------------------------------------------------------===//

/// Small neo functions: a GEMM, an elementwise chain with a reduction (the
/// fusion and vectorization passes' case), a convolution (implicit GEMM), an
/// f16 GEMM (tensor cores) and a function with two results (autodiff).
const char *const kPrograms[] = {
    R"(def mm(a: f32[8, 8], b: f32[8, 8]) -> c {
  c[i, j] = sum(k) a[i, k] * b[k, j]
})",
    R"(def f0(x: f32[4, 16], b: f32[16]) -> y {
  t[i, j] = exp(x[i, j] + b[j])
  s[i] = sum(j) t[i, j]
  y[i, j] = t[i, j] / s[i]
})",
    R"(def f1(I: f32[1, 2, 6, 6], W: f32[4, 2, 3, 3]) -> (O: f32[1, 4, 4, 4]) {
  O[n, k, p, q] = relu(sum(c, r, s) I[n, c, p + r, q + s] * W[k, c, r, s])
})",
    R"(def h(a: f16[16, 16], b: f16[16, 16]) -> c {
  c[i, j] = sum(k) a[i, k] * b[k, j]
})",
    R"(def g(x: f32[8], w: f32[8]) -> (y, l) {
  y[i] = tanh(x[i] * w[i]) + max(x[i], 0)
  l = sum(i) y[i] * y[i]
})",
};

/// Prefixes that lower a program part of the way, so that the passes of
/// later phases get their kind of IR.
const char *const kStages[] = {
    "",
    "neo-lower-to-cpu{stop-after=linalg}",
    "neo-lower-to-cpu{stop-after=bufferize}",
    "neo-lower-to-cpu{stop-after=schedule}",
    "neo-lower-to-cpu{stop-after=loops}",
    "neo-lower-to-ptx{stop-after=bufferize}",
    "neo-lower-to-ptx{stop-after=gpu}",
    "neo-lower-to-ptx{stop-after=outline}",
};

DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *r = new DialectRegistry;
    neo::registerNeoCompilerDialects(*r);
    return r;
  }();
  return *r;
}

/// The corpus as MLIR text: each program at each stage that it reaches.
std::vector<std::string> buildCorpus() {
  std::vector<std::string> corpus;
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  for (const char *program : kPrograms) {
    for (const char *stage : kStages) {
      OwningOpRef<ModuleOp> module = neo::importNeoString(program, &context, "corpus.neo");
      if (!module)
        neo_fuzz::fuzzAbort(std::string("a corpus program does not import:\n") + program);
      PassManager pm(&context, ModuleOp::getOperationName(), OpPassManager::Nesting::Implicit);
      std::string errors;
      llvm::raw_string_ostream os(errors);
      if (failed(parsePassPipeline(stage, pm, os)))
        neo_fuzz::fuzzAbort("a corpus stage does not parse: " + errors);
      if (failed(pm.run(*module)))
        continue; // (e.g. a program that the GPU pipeline does not take)
      std::string text;
      llvm::raw_string_ostream ts(text);
      module->print(ts);
      corpus.push_back(text);
    }
  }
  return corpus;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  neo::registerNeoPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static std::vector<PassEntry> *passes = [] {
    auto *p = new std::vector<PassEntry>(enumerateRegistry());
    if (p->empty() || !llvm::any_of(*p, [](const PassEntry &e) { return e.name == "neo-tile"; }))
      neo_fuzz::fuzzAbort("the pass registry lists no neo passes");
    std::atexit(removeScratch);
    return p;
  }();
  static std::vector<std::string> *corpus = new std::vector<std::string>(buildCorpus());

  FuzzedDataProvider fdp(data, size);
  const std::string &ir = (*corpus)[fdp.ConsumeIntegralInRange<size_t>(0, corpus->size() - 1)];
  PipelineWriter writer(fdp, *passes);
  std::string pipeline = writer.pipeline();
  if (pipeline.empty())
    return 0; // a known bug (kKnownBugs)
  static bool print = std::getenv("NEO_OPTIONS_FUZZER_PRINT") != nullptr;
  if (print)
    llvm::errs() << "--- pipeline: " << pipeline << "\n--- on:\n" << ir << "---\n";

  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  neo_fuzz::DiagnosticCollector diagnostics(&context);
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, config, "corpus.mlir");
  if (!module)
    neo_fuzz::fuzzAbort("a corpus module does not parse back");
  PassManager pm(&context, ModuleOp::getOperationName(), OpPassManager::Nesting::Implicit);
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<neo_fuzz::VerifyEachPass>(pipeline));
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return 0; // a bad option: a clear error
  (void)pm.run(*module);
  return 0;
}
