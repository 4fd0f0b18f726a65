//===- ImportCheck.h - The frontend fuzzers' checks of an import -*- C++ -*-===//
//
// Shared by neo-frontend-fuzzer (bytes as .neo text) and neo-gen-fuzzer
// (programs built from the bytes): imports a program and applies the checks
// that every import must pass.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_FUZZ_IMPORTCHECK_H
#define NEO_FUZZ_IMPORTCHECK_H

#include "FuzzSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace neo_fuzz {

/// Imports `source` as a .neo program into `context` (whose errors
/// `diagnostics` collects) and aborts (a finding) when: an error has no
/// source location; the import fails without an error, or with a verifier
/// error that Sema should have diagnosed itself; it succeeds with errors; or
/// the module does not verify or round-trip. `input` is what a finding
/// prints (the fuzz input). Returns the module, or null after clear errors.
mlir::OwningOpRef<mlir::ModuleOp> importChecked(llvm::StringRef source, mlir::MLIRContext *context,
                                                const DiagnosticCollector &diagnostics,
                                                llvm::StringRef input);

} // namespace neo_fuzz

#endif // NEO_FUZZ_IMPORTCHECK_H
