//===- PtxScan.cpp - The kernels of a PTX text ----------------------------===//
#include "neo/Runtime/Support/PtxScan.h"

#include <algorithm>
#include <cctype>
#include <map>

using namespace mlir;
using namespace mlir::neo;

namespace {

//===----------------------------------------------------------------------===//
// PTX
//===----------------------------------------------------------------------===//

/// `ptx` with comments replaced by spaces (string literals kept), so that
/// commented-out code is not taken for kernels.
std::string stripPtxComments(const std::string &ptx) {
  std::string out = ptx;
  size_t i = 0, n = ptx.size();
  while (i < n) {
    char c = ptx[i];
    if (c == '"') {
      for (++i; i < n && ptx[i] != '"' && ptx[i] != '\n'; ++i)
        ;
      ++i;
    } else if (c == '/' && i + 1 < n && ptx[i + 1] == '/') {
      for (; i < n && ptx[i] != '\n'; ++i)
        out[i] = ' ';
    } else if (c == '/' && i + 1 < n && ptx[i + 1] == '*') {
      size_t end = ptx.find("*/", i + 2);
      end = end == std::string::npos ? n : end + 2;
      for (; i < end; ++i)
        if (out[i] != '\n')
          out[i] = ' ';
    } else {
      ++i;
    }
  }
  return out;
}

bool isPtxIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' ||
         c == '.';
}

/// The byte size of one `.param` declaration ("\t.param .u64 .ptr .align 1 x"),
/// or 0 if it does not parse.
size_t parsePtxParamSize(const std::string &decl) {
  static const std::map<std::string, size_t> kTypeSizes = {
      {".b8", 1},    {".u8", 1},     {".s8", 1},  {".b16", 2}, {".u16", 2}, {".s16", 2},
      {".f16", 2},   {".bf16", 2},   {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4},
      {".f16x2", 4}, {".bf16x2", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}};
  std::vector<std::string> tokens;
  for (size_t i = 0; i < decl.size();) {
    while (i < decl.size() && std::isspace(static_cast<unsigned char>(decl[i])))
      ++i;
    size_t start = i;
    while (i < decl.size() && !std::isspace(static_cast<unsigned char>(decl[i])))
      ++i;
    if (i > start)
      tokens.push_back(decl.substr(start, i - start));
  }
  if (tokens.size() < 3 || tokens[0] != ".param")
    return 0;
  size_t typeSize = 0, count = 1;
  std::string name;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string &t = tokens[i];
    if (auto it = kTypeSizes.find(t); it != kTypeSizes.end()) {
      if (typeSize)
        return 0;
      typeSize = it->second;
    } else if (t == ".align") {
      ++i; // its value
    } else if (t == ".ptr" || t == ".global" || t == ".const" || t == ".local" || t == ".shared") {
      // Pointer attributes.
    } else if (t[0] == '.') {
      return 0;
    } else {
      if (!name.empty())
        return 0;
      name = t;
    }
  }
  if (!typeSize || name.empty())
    return 0;
  // An array: "x[16]".
  if (size_t open = name.find('['); open != std::string::npos) {
    size_t close = name.find(']', open);
    if (close == std::string::npos || close == open + 1)
      return 0;
    count = 0;
    for (size_t i = open + 1; i < close; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(name[i])) || count > (1u << 20))
        return 0;
      count = count * 10 + (name[i] - '0');
    }
  }
  return typeSize * count;
}

} // namespace

std::vector<PtxKernel> mlir::neo::listPtxKernels(const std::string &source) {
  std::string ptx = stripPtxComments(source);
  std::vector<PtxKernel> kernels;
  const std::string keyword = ".entry";
  for (size_t pos = ptx.find(keyword); pos != std::string::npos;
       pos = ptx.find(keyword, pos + keyword.size())) {
    // A whole token: whitespace (or the start) before, whitespace after.
    size_t after = pos + keyword.size();
    if ((pos > 0 && !std::isspace(static_cast<unsigned char>(ptx[pos - 1]))) ||
        after >= ptx.size() || !std::isspace(static_cast<unsigned char>(ptx[after])))
      continue;
    size_t i = after;
    while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i])))
      ++i;
    size_t start = i;
    while (i < ptx.size() && isPtxIdentifierChar(ptx[i]))
      ++i;
    if (i == start)
      continue;
    PtxKernel kernel;
    kernel.name = ptx.substr(start, i - start);
    while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i])))
      ++i;
    if (i < ptx.size() && ptx[i] == '(') {
      size_t close = ptx.find(')', i);
      if (close != std::string::npos) {
        std::string list = ptx.substr(i + 1, close - i - 1);
        kernel.paramsKnown = true;
        bool empty = list.find_first_not_of(" \t\r\n") == std::string::npos;
        for (size_t s = 0; !empty && s <= list.size();) {
          size_t comma = std::min(list.find(',', s), list.size());
          size_t size = parsePtxParamSize(list.substr(s, comma - s));
          if (!size) {
            kernel.paramsKnown = false;
            kernel.paramSizes.clear();
            break;
          }
          kernel.paramSizes.push_back(size);
          s = comma + 1;
        }
      }
    } else {
      // No parameter list at all: a kernel without parameters.
      kernel.paramsKnown = true;
    }
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}
