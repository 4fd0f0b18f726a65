//===- SizeOption.h - --size NAME=VALUE for the tools -----------*- C++ -*-===//
//
// The values of the size parameters of .neo signatures (`x: f32[N, 784]`),
// checked when the command line is parsed (a malformed binding is a
// command-line error naming the option, before anything is read).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_TOOLS_COMMON_SIZEOPTION_H
#define NEO_TOOLS_COMMON_SIZEOPTION_H

#include "neo/Frontend/Import.h"

#include "llvm/Support/CommandLine.h"

#include <map>
#include <string>

namespace neo_tools {

struct SizeBinding {
  std::string name;
  int64_t value = 0;
};

struct SizeBindingParser : llvm::cl::parser<SizeBinding> {
  using llvm::cl::parser<SizeBinding>::parser;
  bool parse(llvm::cl::Option &option, llvm::StringRef, llvm::StringRef arg, SizeBinding &out) {
    std::map<std::string, int64_t> one;
    std::string error;
    if (!mlir::neo::parseSizeBindings(arg, one, error))
      return option.error(error);
    if (one.size() != 1)
      return option.error("expected NAME=VALUE, got '" + arg + "'");
    out.name = one.begin()->first;
    out.value = one.begin()->second;
    return false;
  }
};

using SizeList = llvm::cl::list<SizeBinding, bool, SizeBindingParser>;

inline constexpr const char *kSizeOptionHelp =
    "Value of a size parameter of the .neo signatures (x: f32[N, 4]); repeat the option or "
    "separate bindings with commas";

/// Copies the bindings into `options` (the last of a name given twice wins).
inline void applySizes(const SizeList &sizes, mlir::neo::ImportOptions &options) {
  for (const SizeBinding &b : sizes)
    options.sizes[b.name] = b.value;
}

} // namespace neo_tools

#endif // NEO_TOOLS_COMMON_SIZEOPTION_H
