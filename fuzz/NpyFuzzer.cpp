//===- NpyFuzzer.cpp - Fuzz the .npy reader -------------------------------===//
//
// Input: the bytes of a .npy file. parseNpy must either fail with a message
// that names the file or return an array whose data matches its shape and
// dtype, without reading outside the buffer (ASan checks that: the buffer
// handed to it is exactly the input).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "neo/Runtime/Execution/Npy.h"

#include "llvm/ADT/StringRef.h"

#include <cstring>
#include <memory>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A copy of exactly `size` bytes, so that any read past the end is caught.
  std::unique_ptr<char[]> copy(new char[size ? size : 1]);
  if (size)
    std::memcpy(copy.get(), data, size);
  llvm::StringRef input(copy.get(), size);
  llvm::Expected<mlir::neo::NpyArray> array = mlir::neo::parseNpy(input, "fuzz.npy");
  if (!array) {
    std::string message = llvm::toString(array.takeError());
    if (!llvm::StringRef(message).starts_with("fuzz.npy: "))
      neo_fuzz::fuzzAbort("an error that does not name the file: " + message, input);
    return 0;
  }
  int64_t count = array->numElements();
  if (count < 0 || array->bytes.size() != static_cast<uint64_t>(count) * array->elementSize())
    neo_fuzz::fuzzAbort("the data does not match the shape and dtype", input);
  for (int64_t d : array->shape)
    if (d < 0)
      neo_fuzz::fuzzAbort("a negative dim", input);
  return 0;
}
