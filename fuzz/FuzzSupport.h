//===- FuzzSupport.h - Shared helpers of Neo's fuzz targets -----*- C++ -*-===//
//
// Each target must never crash, hang, leak or read out of bounds, whatever
// its input; a bad input must end in a diagnostic. A *wrong* result that the
// library would otherwise hide (a pass that leaves IR the verifier rejects,
// a printed module that does not parse back) is reported with `fuzzAbort`, so
// that libFuzzer records it as a finding.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_FUZZ_FUZZSUPPORT_H
#define NEO_FUZZ_FUZZSUPPORT_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace neo_fuzz {

/// One dialect registry per process, filled once by `registerDialects` (e.g.
/// neo::registerNeoCompilerDialects; a process calls it with one function),
/// for the target's per-input contexts.
/// Never freed: libFuzzer runs inputs until the process ends.
const mlir::DialectRegistry &registryOnce(void (*registerDialects)(mlir::DialectRegistry &));

/// A copy of `input` followed by a NUL byte. MLIR's lexer reads the byte
/// after a token to end it and stops only at a NUL; files and the buffers
/// that Neo's own entry points make (importNeoString, the C API) always have
/// one, so the fuzzers give the parser what those give it.
std::string nulTerminated(llvm::StringRef input);

/// Prints `message` with the input's first bytes and aborts (a finding).
[[noreturn]] void fuzzAbort(const llvm::Twine &message, llvm::StringRef input = "");

/// Collects the diagnostics of a context instead of printing them; errors are
/// what the library reports, so collecting them is all a target needs.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context);
  ~DiagnosticCollector();
  const std::vector<std::string> &errors() const { return collected; }
  /// Aborts when an error lacks a source location (every error must have one).
  void requireLocations(llvm::StringRef input) const;

private:
  mlir::MLIRContext *context;
  mlir::DiagnosticEngine::HandlerID id;
  std::vector<std::string> collected;
  std::vector<bool> located;
};

/// Verifies `op` and aborts with `what` when the verifier rejects it.
void requireValid(mlir::Operation *op, const llvm::Twine &what, llvm::StringRef input);

/// Prints `op` (custom and generic forms), parses both back and aborts when
/// either fails: the printer and parser of every op must round-trip.
void requireRoundTrip(mlir::Operation *op, mlir::MLIRContext *context, llvm::StringRef input);

/// Verifies the IR after every pass that succeeds, naming the pass (the
/// pass manager's own verifier only says that verification failed).
class VerifyEachPass : public mlir::PassInstrumentation {
public:
  explicit VerifyEachPass(llvm::StringRef input) : input(input) {}
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;

private:
  llvm::StringRef input;
};

} // namespace neo_fuzz

#endif // NEO_FUZZ_FUZZSUPPORT_H
