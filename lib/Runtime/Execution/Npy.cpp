//===- Npy.cpp - Reading and writing .npy files ---------------------------===//
//
// llvm::Error wrappers of the LLVM-free .npy code of NpyFormat.cpp.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/Execution/Npy.h"

#include <system_error>

using namespace mlir;
using namespace mlir::neo;
using llvm::StringRef;

/// `status` (a failure) as an llvm::Error with the same message.
static llvm::Error toLLVMError(const Status &status) {
  std::errc code =
      status.code() == Status::Code::IO ? std::errc::io_error : std::errc::invalid_argument;
  return llvm::createStringError(std::make_error_code(code), status.message());
}

StringRef mlir::neo::stringifyNpyDType(ElementType dtype) { return getNpyDTypeName(dtype); }

llvm::Expected<NpyArray> mlir::neo::parseNpy(StringRef buffer, StringRef name) {
  NpyArray array;
  if (Status s = decodeNpy(buffer.data(), buffer.size(), name.str(), array); !s.ok())
    return toLLVMError(s);
  return array;
}

llvm::Expected<NpyArray> mlir::neo::readNpy(StringRef path, uint64_t maxBytes) {
  NpyArray array;
  if (Status s = loadNpyFile(path.str(), array, maxBytes); !s.ok())
    return toLLVMError(s);
  return array;
}

llvm::Error mlir::neo::writeNpy(StringRef path, const NpyArray &array) {
  if (Status s = saveNpyFile(path.str(), array); !s.ok())
    return toLLVMError(s);
  return llvm::Error::success();
}
