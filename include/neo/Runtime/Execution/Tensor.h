//===- Tensor.h - Host tensors of the Neo runtime ---------------*- C++ -*-===//
#ifndef NEO_RUNTIME_EXECUTION_TENSOR_H
#define NEO_RUNTIME_EXECUTION_TENSOR_H

#include "neo/Support/ElementType.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace neo {
namespace runtime {

// The element type is mlir::neo::ElementType (neo/Support/ElementType.h),
// with its names, sizes and loadElement/storeElement.

/// The runtime element type of an MLIR float type, if it is one Neo supports.
std::optional<ElementType> getElementType(mlir::Type type);

/// The element type and static shape of a tensor argument or result.
struct TensorSpec {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;

  int64_t numElements() const;
  size_t numBytes() const { return numElements() * getElementTypeSize(type); }
  /// "f32[2, 3]".
  std::string str() const;
  bool operator==(const TensorSpec &o) const { return type == o.type && shape == o.shape; }
  bool operator!=(const TensorSpec &o) const { return !(*this == o); }
};

/// A caller-owned, dense, row-major host buffer (not copied by the runtime).
struct HostBuffer {
  void *data = nullptr;
  TensorSpec spec;
};

/// An owning, 64-byte aligned, zero-initialized host tensor.
class HostTensor {
public:
  HostTensor() = default;
  /// Allocates the tensor; when memory runs out, data() is null (see
  /// allocate() for an error instead).
  explicit HostTensor(TensorSpec spec);
  /// A tensor of `spec`, or an error naming `what` when its memory cannot be
  /// allocated.
  static llvm::Expected<HostTensor> allocate(TensorSpec spec, const llvm::Twine &what);
  HostTensor(HostTensor &&) = default;
  HostTensor &operator=(HostTensor &&) = default;

  const TensorSpec &getSpec() const { return spec; }
  void *data() { return storage.get(); }
  const void *data() const { return storage.get(); }
  HostBuffer view() { return HostBuffer{data(), spec}; }

  /// Element `i` (row-major) converted to double, and back.
  double get(int64_t i) const;
  void set(int64_t i, double value);

private:
  struct Free {
    void operator()(void *p) const;
  };
  TensorSpec spec;
  std::unique_ptr<void, Free> storage;
};

/// The inputs and outputs of a function, in order, with their source names.
struct FunctionSignature {
  std::string name;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<std::string> inputNames, outputNames;

  /// One run-time check of index values (neo-index-checks): its check
  /// function returns, per check, the first violating position (row-major
  /// over `extents`; +inf when none) and the index there.
  struct IndexCheck {
    std::string message;
    std::vector<std::string> dims;
    std::vector<int64_t> extents;
  };
  /// The function that checks the index values of the inputs (empty when
  /// the function reads none), run before this one with the same inputs.
  std::string indexCheckFunction;
  std::vector<IndexCheck> indexChecks;
};

} // namespace runtime
} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_EXECUTION_TENSOR_H
