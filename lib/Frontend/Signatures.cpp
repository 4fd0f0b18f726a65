//===- Signatures.cpp - Size bindings and signatures of .neo programs -----===//
//
// Size parameters (`x: f32[N, 784]`) make one .neo function stand for a
// family of shapes; each import binds them (ImportOptions::sizes). A caller
// that binds them from its own tensors, such as neo.torch, first asks for
// the signatures, which needs the parser only.
//
//===----------------------------------------------------------------------===//
#include "neo/Frontend/Import.h"
#include "neo/Frontend/Parser.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::frontend;

static bool isIdentifier(llvm::StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

bool mlir::neo::parseSizeBindings(llvm::StringRef text, std::map<std::string, int64_t> &sizes,
                                  std::string &error) {
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [name, value] = item.split('=');
    name = name.trim();
    value = value.trim();
    if (!item.contains('=') || !isIdentifier(name)) {
      error = ("size binding '" + item.trim() + "' is not NAME=VALUE").str();
      return false;
    }
    int64_t size;
    if (value.getAsInteger(10, size) || size <= 0) {
      error = ("size " + name + " = '" + value + "' is not a positive integer").str();
      return false;
    }
    if (!sizes.emplace(name.str(), size).second) {
      error = ("size " + name + " is given twice").str();
      return false;
    }
  }
  return true;
}

static llvm::json::Object typeJson(const TensorTypeSpec &type) {
  llvm::json::Array shape;
  for (auto [index, size] : llvm::enumerate(type.shape)) {
    size_t dim = index; // (a structured binding is not captured before C++20)
    auto named = llvm::find_if(type.sizes, [&](const SizeRef &s) { return s.dim == dim; });
    if (named != type.sizes.end())
      shape.push_back(named->name);
    else
      shape.push_back(size);
  }
  return llvm::json::Object{{"dtype", stringifyElementKind(type.element)},
                            {"shape", std::move(shape)}};
}

std::optional<std::string> mlir::neo::neoSignaturesAsJson(llvm::SourceMgr &sourceMgr,
                                                          MLIRContext *context,
                                                          const ImportOptions &options) {
  unsigned id = sourceMgr.getMainFileID();
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(id);
  std::string name = buffer->getBufferIdentifier().str();
  Parser parser(
      buffer->getBuffer(),
      [&](llvm::SMLoc l, const llvm::Twine &message) {
        auto [line, col] = sourceMgr.getLineAndColumn(l, id);
        mlir::emitError(FileLineColLoc::get(context, name, line, col), message);
      },
      options.maxExpressionDepth);
  std::optional<Program> program = parser.parseProgram();
  if (!program)
    return std::nullopt;
  llvm::json::Array functions;
  for (const Function &fn : program->functions) {
    llvm::json::Array params, results;
    for (const Param &p : fn.params) {
      llvm::json::Object o = typeJson(p.type);
      o["name"] = p.name;
      params.push_back(std::move(o));
    }
    for (const Result &r : fn.results) {
      llvm::json::Object o = r.type ? typeJson(*r.type) : llvm::json::Object();
      o["name"] = r.name;
      results.push_back(std::move(o));
    }
    functions.push_back(llvm::json::Object{
        {"name", fn.name}, {"params", std::move(params)}, {"results", std::move(results)}});
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(std::move(functions));
  return out;
}
