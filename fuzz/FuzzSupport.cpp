//===- FuzzSupport.cpp - Shared helpers of Neo's fuzz targets -------------===//
#include "FuzzSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

std::string neo_fuzz::nulTerminated(llvm::StringRef input) { return input.str(); }

void neo_fuzz::fuzzAbort(const llvm::Twine &message, llvm::StringRef input) {
  llvm::errs() << "neo fuzz finding: " << message << "\n";
  if (!input.empty()) {
    llvm::errs() << "--- input (" << input.size() << " bytes) ---\n";
    llvm::errs().write_escaped(input.take_front(2000)) << "\n---\n";
  }
  llvm::errs().flush();
  std::abort();
}

/// Whether `loc` names a place in a file (possibly through fused or named
/// locations), as opposed to `loc(unknown)`.
static bool hasFileLocation(Location loc) {
  bool found = false;
  loc->walk([&](Location l) {
    if (isa<FileLineColLoc>(l) || isa<FileLineColRange>(l))
      found = true;
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

neo_fuzz::DiagnosticCollector::DiagnosticCollector(MLIRContext *context) : context(context) {
  id = context->getDiagEngine().registerHandler([this](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error) {
      collected.push_back(diag.str());
      located.push_back(hasFileLocation(diag.getLocation()));
    }
    return success();
  });
}

neo_fuzz::DiagnosticCollector::~DiagnosticCollector() { context->getDiagEngine().eraseHandler(id); }

void neo_fuzz::DiagnosticCollector::requireLocations(llvm::StringRef input) const {
  for (size_t i = 0; i < collected.size(); ++i)
    if (!located[i])
      fuzzAbort("an error without a source location: " + collected[i], input);
}

void neo_fuzz::requireValid(Operation *op, const llvm::Twine &what, llvm::StringRef input) {
  std::string errors;
  {
    ScopedDiagnosticHandler handler(op->getContext(), [&](Diagnostic &diag) {
      errors += diag.str() + "\n";
      return success();
    });
    if (succeeded(verify(op)))
      return;
  }
  fuzzAbort(what + " left IR that does not verify: " + errors, input);
}

void neo_fuzz::requireRoundTrip(Operation *op, MLIRContext *context, llvm::StringRef input) {
  for (bool generic : {false, true}) {
    std::string text;
    {
      llvm::raw_string_ostream os(text);
      OpPrintingFlags flags;
      if (generic)
        flags.printGenericOpForm();
      op->print(os, flags);
    }
    std::string errors;
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      errors += diag.str() + "\n";
      return success();
    });
    ParserConfig config(context);
    OwningOpRef<Operation *> reparsed =
        parseSourceString(text, config, generic ? "generic" : "custom");
    if (!reparsed)
      fuzzAbort(llvm::Twine("the ") + (generic ? "generic" : "custom") +
                    " form does not parse back: " + errors + "printed:\n" + text,
                input);
  }
}

void neo_fuzz::VerifyEachPass::runAfterPass(Pass *pass, Operation *op) {
  requireValid(op, "pass '" + pass->getArgument() + "'", input);
}

const mlir::DialectRegistry &
neo_fuzz::registryOnce(void (*registerDialects)(mlir::DialectRegistry &)) {
  static mlir::DialectRegistry *registry = [&] {
    auto *r = new mlir::DialectRegistry;
    registerDialects(*r);
    return r;
  }();
  return *registry;
}
