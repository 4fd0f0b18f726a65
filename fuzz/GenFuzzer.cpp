//===- GenFuzzer.cpp - Fuzz the frontend with generated .neo programs -----===//
//
// Input: bytes read as choices (FuzzedDataProvider) that build a .neo
// program which is valid, or nearly so (docs/language.md): functions with
// parameters of every element type and rank, many statements with explicit
// extents, reads of parameters and earlier tensors with affine indices
// (including big and overflowing integer constants) and padding, long sums
// and products, nested parentheses, chains of unary minus and `not`,
// reductions nested in terms, select with domains, comparisons and calls.
// Programs reach the size of -max_len (64 KB) and beyond. Each program goes
// through the importer with neo-frontend-fuzzer's checks (ImportCheck.h);
// small ones that import then run neo-lower-to-cpu to the LLVM dialect
// (no code generation), verified after every pass, like
// neo-pipeline-fuzzer. Findings: crashes, sanitizer reports, hangs, stack
// overflows, and the checks' aborts; clear errors are fine.
//
// To see the program of an input: `NEO_GEN_FUZZER_PRINT=1 neo-gen-fuzzer
// FILE` (the fuzz target reads the variable, no library does).
//
//===----------------------------------------------------------------------===//
#include "ImportCheck.h"

#include "neo/Frontend/Import.h"
#include "neo/Pipelines/Pipelines.h"
#include "neo/Registration.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;

namespace {

/// The most bytes a generated program has before the generator only closes
/// what it opened (a little over -max_len, so that inputs of every length
/// map onto programs of every length).
constexpr size_t kMaxProgram = 96 * 1024;
/// Programs at most this long, with tensors at most this big, also run the
/// CPU pipeline.
constexpr size_t kMaxPipelineProgram = 1500;
constexpr int64_t kMaxPipelineElements = 4096;

const char *const kElementTypes[] = {"f32", "f32", "f32", "f64", "f16", "bf16"};
const char *const kUnary[] = {"exp", "log", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "abs"};
const char *const kReductions[] = {"sum", "prod", "max", "min"};
const char *const kCompares[] = {"<", "<=", ">", ">=", "==", "!="};
const char *const kBinary[] = {" + ", " - ", " * ", " / "};
/// Integer constants of indices and extents at the edges of int32, int64
/// and beyond (the lexer and Sema must reject or handle each).
const char *const kBigIntegers[] = {
    "2147483647",           "2147483648",           "4294967295",
    "4294967296",           "9223372036854775807",  "9223372036854775808",
    "18446744073709551615", "18446744073709551616", "99999999999999999999999999999999",
    "1099511627776"};
const char *const kNumbers[] = {"0",     "1",     "2",      "0.5", ".5", "1e-5", "2.5",
                                "1e308", "1e309", "1e-320", "inf", "3",  "10",   "1e38"};
const char *const kIdentities[] = {"0", "1", "-inf", "inf"};
const char *const kIndexNames[] = {"i", "j", "k", "l", "m", "n", "p", "q"};
const char *const kReductionNames[] = {"a", "b", "c", "d", "e", "g", "h", "u", "v", "w"};

struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::string elem;
};

struct Var {
  std::string name;
  int64_t extent;
};

class Generator {
public:
  explicit Generator(FuzzedDataProvider &fdp) : fdp(fdp) {}

  std::string program() {
    int functions = pick(1, 3);
    for (int f = 0; f < functions && room(); ++f)
      function(f);
    return out;
  }
  int64_t largestTensor() const { return largest; }

private:
  FuzzedDataProvider &fdp;
  std::string out;
  std::vector<Tensor> tensors; // the current function's parameters and tensors
  std::vector<Var> scope;      // the index variables bound here
  std::string elem = "f32";    // the current function's element type
  int64_t largest = 0;
  int nextTensor = 0;

  bool room() const { return out.size() < kMaxProgram; }
  int pick(int lo, int hi) { return fdp.ConsumeIntegralInRange<int>(lo, hi); }
  bool chance(int percent) { return pick(0, 99) < percent; }
  template <size_t N> const char *oneOf(const char *const (&options)[N]) {
    return options[pick(0, N - 1)];
  }
  /// A count that is usually small and sometimes long (the fuzzer then
  /// reaches long chains and many statements).
  int count(int usual, int rare) { return chance(90) ? pick(1, usual) : pick(1, rare); }

  int64_t dim() {
    static const int64_t small[] = {1, 2, 3, 4, 5, 8, 16, 7};
    if (chance(97))
      return small[pick(0, 7)];
    static const int64_t edge[] = {0, 64, 1000, 65536, 1 << 20, int64_t(1) << 31, int64_t(1) << 40};
    return edge[pick(0, 6)];
  }

  void noteShape(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n = (d > 0 && n <= (int64_t(1) << 40) / d) ? n * d : (int64_t(1) << 40);
    largest = std::max(largest, n);
  }

  void type(const std::string &e, const std::vector<int64_t> &shape) {
    out += e + "[";
    for (size_t i = 0; i < shape.size(); ++i)
      out += (i ? ", " : "") + std::to_string(shape[i]);
    out += "]";
  }

  void function(int index) {
    tensors.clear();
    scope.clear();
    nextTensor = 0;
    elem = chance(85) ? "f32" : oneOf(kElementTypes);
    out += "def f" + std::to_string(index) + "(";
    int params = pick(chance(5) ? 0 : 1, 4);
    for (int p = 0; p < params; ++p) {
      Tensor t{"x" + std::to_string(p), {}, chance(95) ? elem : oneOf(kElementTypes)};
      int rank = pick(0, 4);
      for (int d = 0; d < rank; ++d)
        t.shape.push_back(dim());
      noteShape(t.shape);
      out += (p ? ", " : "") + t.name + ": ";
      type(t.elem, t.shape);
      tensors.push_back(std::move(t));
    }
    out += ") -> ";
    // The statements come first (their results are named below).
    std::string header = std::move(out);
    out.clear();
    int statements = count(6, 400);
    for (int s = 0; s < statements && room(); ++s)
      statement();
    std::string body = std::move(out);
    out = std::move(header);
    results();
    out += " {\n" + body + "}\n";
  }

  void results() {
    std::vector<const Tensor *> defined;
    for (const Tensor &t : tensors)
      if (t.name[0] == 't')
        defined.push_back(&t);
    if (defined.empty() && !tensors.empty() && chance(50))
      defined.push_back(&tensors[0]); // a result may be a parameter
    if (defined.empty()) {
      out += "missing"; // an undefined result: an error
      return;
    }
    int n = pick(1, std::min<int>(3, defined.size()));
    bool parens = n > 1 || chance(50);
    out += parens ? "(" : "";
    for (int r = 0; r < n; ++r) {
      // Mostly the last tensors defined; sometimes any.
      const Tensor *t =
          chance(70) ? defined[defined.size() - 1 - r] : defined[pick(0, defined.size() - 1)];
      out += (r ? ", " : "") + t->name;
      if (chance(30)) {
        out += ": ";
        type(chance(90) ? t->elem : oneOf(kElementTypes), t->shape);
      }
    }
    out += parens ? ")" : "";
  }

  void statement() {
    Tensor t{"t" + std::to_string(nextTensor++), {}, elem};
    out += "  " + t.name;
    int rank = pick(0, 4);
    scope.clear();
    if (rank > 0 || chance(30)) {
      out += "[";
      for (int d = 0; d < rank; ++d) {
        Var v{kIndexNames[d], dim()};
        if (chance(3))
          v.name = kIndexNames[pick(0, 7)]; // maybe doubly bound
        out += (d ? ", " : "") + v.name;
        if (chance(92)) {
          out += " < " + (chance(2) ? std::string(oneOf(kBigIntegers)) : std::to_string(v.extent));
        } else {
          v.extent = -1; // inferred from a read, or an error
        }
        t.shape.push_back(v.extent > 0 ? v.extent : 1);
        scope.push_back(v);
      }
      out += "]";
    }
    out += " = ";
    expr(pick(1, 6));
    out += chance(30) ? ";\n" : "\n";
    noteShape(t.shape);
    tensors.push_back(std::move(t));
  }

  /// A value expression nested at most `depth` levels (and more through
  /// the rare long chains).
  void expr(int depth) {
    if (depth <= 0 || !room() || fdp.remaining_bytes() == 0) {
      leaf();
      return;
    }
    switch (pick(0, 13)) {
    case 0:
    case 1: leaf(); return;
    case 2:
    case 3: access(depth); return;
    case 4: { // a sum, product or difference chain, sometimes very long
      int n = count(4, 3000);
      for (int i = 0; i < n && room(); ++i) {
        if (i)
          out += oneOf(kBinary);
        expr(n > 8 ? std::min(depth - 1, 1) : depth - 1);
      }
      return;
    }
    case 5: { // nested parentheses, sometimes very deep
      int n = count(3, 20000);
      out.append(n, '(');
      expr(depth - 1);
      out.append(n, ')');
      return;
    }
    case 6: { // a chain of unary minus
      int n = count(3, 20000);
      for (int i = 0; i < n; ++i)
        out += chance(50) ? "-" : "- ";
      expr(depth - 1);
      return;
    }
    case 7:
      out += oneOf(kUnary);
      out += "(";
      expr(depth - 1);
      out += ")";
      return;
    case 8:
      out += chance(50) ? "max(" : "min(";
      expr(depth - 1);
      out += ", ";
      expr(depth - 1);
      out += ")";
      return;
    case 9:
    case 10: reduction(depth); return;
    case 11: select(depth); return;
    case 12: // a term: product of a reduction or access and something
      out += "(";
      expr(depth - 1);
      out += ") * ";
      expr(depth - 1);
      return;
    default: // a condition used as a number (an error), or in parentheses
      if (chance(50)) {
        condition(depth - 1);
      } else {
        out += "(";
        expr(depth - 1);
        out += ")";
      }
      return;
    }
  }

  void leaf() {
    int kind = pick(0, 9);
    if (kind < 3 && !tensors.empty()) {
      access(0);
      return;
    }
    if (kind < 5 && !scope.empty()) {
      out += scope[pick(0, scope.size() - 1)].name; // an index variable as a value
      return;
    }
    if (kind == 9 && chance(20)) {
      out += oneOf(kBigIntegers);
      return;
    }
    out += oneOf(kNumbers);
  }

  /// An integer index expression of the variables in scope.
  void index(int depth) {
    if (scope.empty() || chance(5)) {
      out += chance(80) ? std::to_string(pick(0, 4)) : oneOf(kBigIntegers);
      return;
    }
    const std::string &v = scope[pick(0, scope.size() - 1)].name;
    switch (depth > 0 ? pick(0, 9) : 0) {
    case 0:
    case 1:
    case 2: out += v; return;
    case 3:
      out += v + (chance(50) ? " + " : " - ");
      out += chance(90) ? std::to_string(pick(0, 3)) : oneOf(kBigIntegers);
      return;
    case 4:
      out += (chance(90) ? std::to_string(pick(1, 3)) : oneOf(kBigIntegers));
      out += "*" + v;
      return;
    case 5:
      out += "(";
      index(depth - 1);
      out += ") // " + (chance(90) ? std::to_string(pick(1, 4)) : std::string(oneOf(kBigIntegers)));
      return;
    case 6:
      index(depth - 1);
      out += " % " + (chance(90) ? std::to_string(pick(1, 4)) : std::string(oneOf(kBigIntegers)));
      return;
    case 7: { // a long affine sum of the variables
      int n = count(3, 2000);
      for (int i = 0; i < n && room(); ++i) {
        out += i ? (chance(50) ? " + " : " - ") : "";
        index(0);
      }
      return;
    }
    case 8:
      index(depth - 1);
      out += " + ";
      index(depth - 1);
      return;
    default: // a non-affine index (an error)
      out += v + " * " + scope[pick(0, scope.size() - 1)].name;
      return;
    }
  }

  void access(int depth) {
    if (tensors.empty()) {
      out += oneOf(kNumbers);
      return;
    }
    const Tensor &t = tensors[pick(0, tensors.size() - 1)];
    std::string name = t.name;
    size_t rank = t.shape.size();
    if (chance(3))
      rank = pick(0, 5); // a wrong number of indices
    out += name;
    if (rank == 0 && chance(50))
      return;
    out += "[";
    for (size_t d = 0; d < rank; ++d) {
      if (d)
        out += ", ";
      index(depth > 0 ? 2 : 0);
    }
    out += "]";
    if (chance(15)) {
      out += " pad ";
      out += chance(30) ? "-" : "";
      out += chance(50) ? "inf" : oneOf(kNumbers);
    }
  }

  void reduction(int depth) {
    out += oneOf(kReductions);
    out += "(";
    int n = count(2, 6);
    size_t before = scope.size();
    for (int i = 0; i < n; ++i) {
      Var v{kReductionNames[pick(0, 9)], dim()};
      out += (i ? ", " : "") + v.name;
      if (chance(90))
        out += " < " + (chance(2) ? std::string(oneOf(kBigIntegers)) : std::to_string(v.extent));
      scope.push_back(v);
    }
    out += ") ";
    // The body: a term (the reduction binds the multiplicative term).
    if (chance(40)) {
      out += "(";
      expr(depth - 1);
      out += ")";
    } else {
      access(depth - 1);
      if (chance(50)) {
        out += " * ";
        access(depth - 1);
      }
    }
    scope.resize(before);
  }

  void condition(int depth) {
    int kind = depth <= 0 ? 0 : pick(0, 5);
    switch (kind) {
    case 0:
    case 1:
      if (!scope.empty() && chance(70)) {
        index(1);
        out += std::string(" ") + oneOf(kCompares) + " ";
        index(1);
      } else {
        expr(depth - 1);
        out += std::string(" ") + oneOf(kCompares) + " ";
        expr(depth - 1);
      }
      return;
    case 2: { // a chain of `not`
      int n = count(3, 20000);
      for (int i = 0; i < n; ++i)
        out += "not ";
      condition(depth - 1);
      return;
    }
    case 3:
    case 4: {
      int n = count(3, 1000);
      for (int i = 0; i < n && room(); ++i) {
        if (i)
          out += chance(70) ? " and " : " or ";
        condition(n > 4 ? 0 : depth - 1);
      }
      return;
    }
    default:
      out += "(";
      condition(depth - 1);
      out += ")";
      return;
    }
  }

  void select(int depth) {
    out += "select(";
    condition(depth - 1);
    out += ", ";
    expr(depth - 1);
    out += ", ";
    // The identity of the reduction or statement makes it a domain.
    if (chance(60))
      out += oneOf(kIdentities);
    else
      expr(depth - 1);
    out += ")";
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  Generator generator(fdp);
  std::string program = generator.program();
  static bool print = std::getenv("NEO_GEN_FUZZER_PRINT") != nullptr;
  if (print)
    llvm::errs() << "--- generated program (" << program.size() << " bytes) ---\n"
                 << program << "---\n";

  const DialectRegistry &registry = neo_fuzz::registryOnce(neo::registerNeoCompilerDialects);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  neo_fuzz::DiagnosticCollector diagnostics(&context);
  OwningOpRef<ModuleOp> module = neo_fuzz::importChecked(program, &context, diagnostics, program);
  if (!module || program.size() > kMaxPipelineProgram ||
      generator.largestTensor() > kMaxPipelineElements)
    return 0;

  PassManager pm(&context);
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<neo_fuzz::VerifyEachPass>(program));
  neo::CpuPipelineOptions options;
  neo::buildNeoLowerToCpuPipeline(pm, options);
  (void)pm.run(*module);
  return 0;
}
