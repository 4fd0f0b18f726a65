//===- Status.h - Errors of Neo's LLVM-free code ----------------*- C++ -*-===//
//
// The outcome of an operation of the code that must build without LLVM
// (NeoSupport's files, the CUDA driver loader, GPU bundles, the .npy format),
// so that the lean `neo-cuda-runner` can be compiled on machines that have no
// LLVM.
// It plays the role of llvm::Error there: a code saying what kind of failure
// it was, and a message for people.
//
//   if (Status s = bundle.load(...); !s.ok())
//     return fail(s.message());
//
//===----------------------------------------------------------------------===//
#ifndef NEO_SUPPORT_STATUS_H
#define NEO_SUPPORT_STATUS_H

#include <string>
#include <utility>

namespace mlir {
namespace neo {

class [[nodiscard]] Status {
public:
  enum class Code {
    Ok,
    /// No usable CUDA driver or device: libcuda is missing or too old,
    /// cuInit fails, or there is no device. Callers may skip rather than fail.
    NoDriver,
    /// A CUDA driver call failed; the message names the call and the error.
    Cuda,
    /// A bundle or a file is malformed; the message names the field.
    Invalid,
    /// A file could not be read or written.
    IO,
    /// The caller passed something inconsistent (e.g. a wrong number of inputs).
    Usage,
  };

  /// Success.
  Status() = default;
  static Status success() { return Status(); }
  static Status error(Code code, std::string message) { return Status(code, std::move(message)); }

  bool ok() const { return code_ == Code::Ok; }
  Code code() const { return code_; }
  const std::string &message() const { return message_; }
  /// True when the failure means that there is no usable CUDA driver or device.
  bool isNoDriver() const { return code_ == Code::NoDriver; }

  /// The same failure with `prefix` put before its message (for context such
  /// as a file name); success stays success.
  Status withPrefix(const std::string &prefix) const {
    return ok() ? *this : Status(code_, prefix + message_);
  }

private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::Ok;
  std::string message_;
};

} // namespace neo
} // namespace mlir

#endif // NEO_SUPPORT_STATUS_H
