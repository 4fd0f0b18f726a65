//===- MakeError.h - The execution library's string errors ------*- C++ -*-===//
//
// Private to lib/Runtime/Execution: every file there reports failures as
// llvm::Error with a message (one definition, so that the files also build
// as one unity translation unit).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_RUNTIME_EXECUTION_MAKEERROR_H
#define NEO_LIB_RUNTIME_EXECUTION_MAKEERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace mlir {
namespace neo {
namespace runtime {
namespace detail {

inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace detail
} // namespace runtime
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_RUNTIME_EXECUTION_MAKEERROR_H
