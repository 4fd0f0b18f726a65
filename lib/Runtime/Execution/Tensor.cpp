//===- Tensor.cpp - Host tensors of the Neo runtime -----------------------===//
#include "neo/Runtime/Execution/Tensor.h"
#include "MakeError.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace mlir::neo;
using namespace mlir::neo::runtime;
using mlir::neo::runtime::detail::makeError;

std::optional<ElementType> mlir::neo::runtime::getElementType(mlir::Type type) {
  if (type.isF16()) return ElementType::F16;
  if (type.isBF16()) return ElementType::BF16;
  if (type.isF32()) return ElementType::F32;
  if (type.isF64()) return ElementType::F64;
  if (type.isInteger(32))
    return ElementType::I32;
  if (type.isInteger(64))
    return ElementType::I64;
  return std::nullopt;
}

int64_t TensorSpec::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string TensorSpec::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << getElementTypeName(type) << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

void HostTensor::Free::operator()(void *p) const { std::free(p); }

HostTensor::HostTensor(TensorSpec spec) : spec(std::move(spec)) {
  size_t bytes = this->spec.numBytes();
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  storage.reset(std::aligned_alloc(64, rounded));
  if (storage)
    std::memset(storage.get(), 0, rounded);
}

/// The machine's physical memory in bytes (0 when unknown).
static uint64_t physicalMemory() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
#endif
  return 0;
}

llvm::Expected<HostTensor> HostTensor::allocate(TensorSpec spec, const llvm::Twine &what) {
  auto error = [&](const llvm::Twine &why) {
    return makeError("cannot allocate " + llvm::Twine(spec.numBytes()) + " bytes for " + what +
                     " (" + spec.str() + ")" + why);
  };
  // Never ask for more than the machine has: with memory overcommit the
  // allocation would succeed and zeroing it would end the process.
  uint64_t memory = physicalMemory();
  if (memory && spec.numBytes() > memory)
    return error(": the machine has " + llvm::Twine(memory) + " bytes of memory");
  HostTensor tensor(spec);
  if (!tensor.data())
    return error("");
  return std::move(tensor);
}

double HostTensor::get(int64_t i) const { return loadElement(spec.type, data(), i); }
void HostTensor::set(int64_t i, double value) { storeElement(spec.type, data(), i, value); }
