//===- NpyFormat.cpp - The .npy format without LLVM -----------------------===//
//
// The format (numpy/lib/format.py): the magic string "\x93NUMPY", a major and
// a minor version byte, the header length (uint16 LE for 1.0, uint32 LE for
// 2.0 and 3.0), then the header: a Python dict literal with the keys 'descr',
// 'fortran_order' and 'shape', padded with spaces and ended by '\n' so that
// the data starts at a multiple of 64 bytes. The data follows.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/Support/NpyFormat.h"

#include "neo/Support/FileIO.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

using namespace mlir;
using namespace mlir::neo;

bool mlir::neo::isNpyElementType(ElementType type) {
  // bf16 travels as its raw bits ('<u2'): numpy has no bfloat16.
  return type == ElementType::F16 || type == ElementType::BF16 || type == ElementType::F32 ||
         type == ElementType::F64 || type == ElementType::I32 || type == ElementType::I64;
}

const char *mlir::neo::getNpyDTypeName(ElementType type) {
  switch (type) {
  case ElementType::F16: return "float16";
  case ElementType::F32: return "float32";
  case ElementType::F64: return "float64";
  case ElementType::BF16: return "bfloat16";
  case ElementType::I32: return "int32";
  case ElementType::I64: return "int64";
  }
  return "unknown";
}

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

size_t NpyArray::elementSize() const { return getElementTypeSize(dtype); }

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kAlign = 64;

Status makeError(const std::string &name, const std::string &message) {
  return Status::error(Status::Code::Invalid, name + ": " + message);
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isAlnum(char c) { return isDigit(c) || isAlpha(c); }

/// `a * b`, or nothing if it overflows int64.
std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

bool isLittleEndianHost() {
  const uint16_t one = 1;
  return *reinterpret_cast<const unsigned char *>(&one) == 1;
}

/// `text` as a printable, quoted snippet for messages (at most ~40 chars):
/// backslashes doubled, unprintable bytes and '"' as \XX.
std::string quote(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string s = "'";
  for (unsigned char c : text.substr(0, 40)) {
    if (c == '\\') {
      s += "\\\\";
    } else if (c >= 0x20 && c <= 0x7e && c != '"') {
      s.push_back(static_cast<char>(c));
    } else {
      s.push_back('\\');
      s.push_back(kHex[c >> 4]);
      s.push_back(kHex[c & 15]);
    }
  }
  if (text.size() > 40)
    s += "...";
  return s + "'";
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

//===----------------------------------------------------------------------===//
// The header: a small parser of Python literals
//===----------------------------------------------------------------------===//

/// A Python literal of a header.
struct PyValue {
  enum class Kind { Str, Bool, None, Int, Tuple, List, Other } kind = Kind::Other;
  std::string str;            // Str
  bool boolean = false;       // Bool
  int64_t integer = 0;        // Int
  bool overflow = false;      // Int that does not fit in int64
  std::vector<PyValue> items; // Tuple, List
  std::string_view source;    // the text of the literal
};

class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  /// Parses the dict into (key, value) pairs; on error sets `error`.
  bool parseDict(std::vector<std::pair<std::string, PyValue>> &entries);
  std::string error;

private:
  static constexpr unsigned kMaxDepth = 32;

  void skipSpace() {
    while (pos < text.size() &&
           (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  bool fail(const std::string &message) {
    if (error.empty())
      error = message + " at header offset " + std::to_string(pos);
    return false;
  }
  /// A description of what is at `pos`, for messages.
  std::string found() const {
    if (atEnd())
      return "the end of the header";
    return quote(text.substr(pos, 1));
  }
  std::string_view slice(size_t start, size_t end) const { return text.substr(start, end - start); }
  bool parseValue(PyValue &value, unsigned depth);
  bool parseString(PyValue &value);
  bool parseNumber(PyValue &value);
  bool parseSequence(PyValue &value, char close, unsigned depth);

  std::string_view text;
  size_t pos = 0;
};

bool HeaderParser::parseDict(std::vector<std::pair<std::string, PyValue>> &entries) {
  skipSpace();
  if (peek() != '{')
    return fail("expected '{' but found " + found());
  ++pos;
  while (true) {
    skipSpace();
    if (peek() == '}') {
      ++pos;
      break;
    }
    PyValue key;
    if (peek() != '\'' && peek() != '"')
      return fail("expected a string key or '}' but found " + found());
    if (!parseString(key))
      return false;
    skipSpace();
    if (peek() != ':')
      return fail("expected ':' after key " + quote(key.str) + " but found " + found());
    ++pos;
    PyValue value;
    if (!parseValue(value, 0))
      return false;
    entries.emplace_back(key.str, std::move(value));
    skipSpace();
    if (peek() == ',') {
      ++pos;
      continue;
    }
    if (peek() == '}') {
      ++pos;
      break;
    }
    return fail("expected ',' or '}' in the dictionary but found " + found());
  }
  // Padding: spaces and the final newline (numpy also tolerates none).
  skipSpace();
  if (!atEnd())
    return fail("unexpected " + found() + " after the dictionary");
  return true;
}

bool HeaderParser::parseValue(PyValue &value, unsigned depth) {
  if (depth > kMaxDepth)
    return fail("literals nested too deeply");
  skipSpace();
  size_t start = pos;
  char c = peek();
  bool ok;
  if (c == '\'' || c == '"') {
    ok = parseString(value);
  } else if (c == '(') {
    ok = parseSequence(value, ')', depth);
  } else if (c == '[') {
    ok = parseSequence(value, ']', depth);
  } else if (isDigit(c) || c == '-' || c == '+' || c == '.') {
    ok = parseNumber(value);
  } else if (isAlpha(c) || c == '_') {
    while (!atEnd() && (isAlnum(peek()) || peek() == '_'))
      ++pos;
    std::string_view word = slice(start, pos);
    if (word == "True" || word == "False") {
      value.kind = PyValue::Kind::Bool;
      value.boolean = word == "True";
    } else if (word == "None") {
      value.kind = PyValue::Kind::None;
    } else {
      pos = start;
      return fail("unexpected name " + quote(word));
    }
    ok = true;
  } else {
    return fail("expected a value but found " + found());
  }
  if (!ok)
    return false;
  // A parenthesized expression may have reset the source; keep the outermost.
  value.source = slice(start, pos);
  return true;
}

bool HeaderParser::parseString(PyValue &value) {
  char quoteChar = text[pos++];
  value.kind = PyValue::Kind::Str;
  while (true) {
    if (atEnd())
      return fail("unterminated string");
    char c = text[pos++];
    if (c == quoteChar)
      return true;
    if (c == '\n')
      return fail("unterminated string");
    if (c == '\\') {
      if (atEnd())
        return fail("unterminated string");
      c = text[pos++];
    }
    value.str.push_back(c);
  }
}

bool HeaderParser::parseNumber(PyValue &value) {
  size_t start = pos;
  bool negative = false;
  while (peek() == '-' || peek() == '+') {
    negative ^= peek() == '-';
    ++pos;
    skipSpace();
  }
  if (!isDigit(peek()) && peek() != '.')
    return fail("expected a number but found " + found());
  value.kind = PyValue::Kind::Int;
  uint64_t magnitude = 0;
  while (isDigit(peek())) {
    unsigned digit = peek() - '0';
    if (magnitude > (UINT64_MAX - digit) / 10)
      value.overflow = true;
    else
      magnitude = magnitude * 10 + digit;
    ++pos;
  }
  // Floats, complex numbers, hexadecimal, digit separators: not integers.
  if (!atEnd() &&
      (peek() == '.' || peek() == 'e' || peek() == 'E' || peek() == 'j' || peek() == 'J' ||
       peek() == 'x' || peek() == 'X' || peek() == '_' || peek() == 'o' || peek() == 'b')) {
    while (!atEnd() && (isAlnum(peek()) || peek() == '.' || peek() == '_' ||
                        ((peek() == '-' || peek() == '+') && pos > 0 &&
                         (text[pos - 1] == 'e' || text[pos - 1] == 'E'))))
      ++pos;
    value.kind = PyValue::Kind::Other;
    value.source = slice(start, pos);
    return true;
  }
  // Python 2 longs: "3L".
  if (peek() == 'L' || peek() == 'l')
    ++pos;
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(INT64_MAX);
  if (value.overflow || magnitude > kMaxPositive + (negative ? 1 : 0)) {
    value.overflow = true;
  } else if (negative) {
    value.integer = static_cast<int64_t>(0 - magnitude);
  } else {
    value.integer = static_cast<int64_t>(magnitude);
  }
  return true;
}

bool HeaderParser::parseSequence(PyValue &value, char close, unsigned depth) {
  bool isTuple = close == ')';
  std::string what = isTuple ? "tuple" : "list";
  ++pos; // '(' or '['
  std::vector<PyValue> items;
  bool sawComma = false;
  while (true) {
    skipSpace();
    if (peek() == close) {
      ++pos;
      break;
    }
    PyValue item;
    if (!parseValue(item, depth + 1))
      return false;
    items.push_back(std::move(item));
    skipSpace();
    if (peek() == ',') {
      ++pos;
      sawComma = true;
      continue;
    }
    if (peek() == close) {
      ++pos;
      break;
    }
    return fail("bad " + what + " syntax: expected ',' or '" + std::string(1, close) +
                "' but found " + found());
  }
  // "(x)" is x itself, not a tuple.
  if (isTuple && items.size() == 1 && !sawComma) {
    value = std::move(items[0]);
    return true;
  }
  value.kind = isTuple ? PyValue::Kind::Tuple : PyValue::Kind::List;
  value.items = std::move(items);
  return true;
}

uint32_t readLittleEndian(const char *p, size_t bytes) {
  uint32_t v = 0;
  for (size_t i = 0; i < bytes; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

} // namespace

//===----------------------------------------------------------------------===//
// decodeNpy
//===----------------------------------------------------------------------===//

Status mlir::neo::decodeNpy(const char *data, size_t size, const std::string &name,
                            NpyArray &result) {
  std::string_view buffer(data, size);
  if (buffer.size() < kMagicSize || buffer.substr(0, kMagicSize) != std::string_view(kMagic, 6))
    return makeError(name, "not a .npy file (bad magic string)");
  if (buffer.size() < kMagicSize + 2)
    return makeError(name, "truncated header (the file ends in the format version)");
  unsigned major = static_cast<unsigned char>(buffer[6]);
  unsigned minor = static_cast<unsigned char>(buffer[7]);
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    return makeError(name, "unsupported .npy format version " + std::to_string(major) + "." +
                               std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  size_t lengthSize = major == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lengthSize;
  if (buffer.size() < prefix)
    return makeError(name, "truncated header (the file ends in the header length)");
  uint64_t headerLength = readLittleEndian(buffer.data() + 8, lengthSize);
  if (headerLength > buffer.size() - prefix)
    return makeError(name, "truncated header (the header is " + std::to_string(headerLength) +
                               " bytes but only " + std::to_string(buffer.size() - prefix) +
                               " bytes follow its length)");
  std::string_view header = buffer.substr(prefix, headerLength);
  std::string_view payload = buffer.substr(prefix + headerLength);

  std::vector<std::pair<std::string, PyValue>> entries;
  HeaderParser parser(header);
  if (!parser.parseDict(entries))
    return makeError(name, "malformed header: " + parser.error);

  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto &[key, value] : entries) {
    const PyValue **slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortran
                           : key == "shape"         ? &shape
                                                    : nullptr;
    if (!slot)
      return makeError(name, "malformed header: unexpected key " + quote(key));
    if (*slot)
      return makeError(name, "malformed header: duplicate key " + quote(key));
    *slot = &value;
  }
  for (auto [value, key] :
       {std::pair{descr, "descr"}, std::pair{fortran, "fortran_order"}, std::pair{shape, "shape"}})
    if (!value)
      return makeError(name, std::string("malformed header: missing '") + key + "'");

  // 'fortran_order'.
  if (fortran->kind != PyValue::Kind::Bool)
    return makeError(name, "malformed header: 'fortran_order' must be True or False, "
                           "not " +
                               quote(fortran->source));
  if (fortran->boolean)
    return makeError(name, "Fortran-ordered arrays are not supported");

  // 'shape'.
  NpyArray array;
  if (shape->kind != PyValue::Kind::Tuple)
    return makeError(name,
                     "malformed header: 'shape' must be a tuple, not " + quote(shape->source));
  for (size_t i = 0; i < shape->items.size(); ++i) {
    const PyValue &dim = shape->items[i];
    std::string which = "malformed header: dim #" + std::to_string(i) + " of 'shape' ";
    if (dim.kind != PyValue::Kind::Int)
      return makeError(name, which + "is not an integer: " + quote(dim.source));
    if (dim.overflow)
      return makeError(name, which + "is too large: " + quote(dim.source));
    if (dim.integer < 0)
      return makeError(name, which + "is negative: " + std::to_string(dim.integer));
    array.shape.push_back(dim.integer);
  }

  // 'descr'.
  if (descr->kind != PyValue::Kind::Str)
    return makeError(name,
                     "unsupported dtype " + quote(descr->source) +
                         " (expected '<f2', '<f4', '<f8', '<i4', '<i8' or '<u2' (bf16 bits))");
  std::string_view type = descr->str;
  char order = '=';
  if (!type.empty() && std::string_view("<>|=").find(type.front()) != std::string_view::npos) {
    order = type.front();
    type.remove_prefix(1);
  }
  std::optional<ElementType> dtype;
  if (type == "f2")
    dtype = ElementType::F16;
  else if (type == "f4")
    dtype = ElementType::F32;
  else if (type == "f8")
    dtype = ElementType::F64;
  else if (type == "i4")
    dtype = ElementType::I32;
  else if (type == "i8")
    dtype = ElementType::I64;
  else if (type == "u2")
    dtype = ElementType::BF16;
  if (!dtype)
    return makeError(name,
                     "unsupported dtype " + quote(descr->str) +
                         " (expected '<f2', '<f4', '<f8', '<i4', '<i8' or '<u2' (bf16 bits))");
  if (order == '>')
    return makeError(
        name,
        "big-endian dtype " + quote(descr->str) +
            " is not supported (expected '<f2', '<f4', '<f8', '<i4', '<i8' or '<u2' (bf16 bits))");
  if (order != '<' && !isLittleEndianHost())
    return makeError(
        name,
        "dtype " + quote(descr->str) +
            " is in the native byte order, which is big-endian "
            "on this machine (expected '<f2', '<f4', '<f8', '<i4', '<i8' or '<u2' (bf16 bits))");
  array.dtype = *dtype;

  // The data.
  int64_t count = 1;
  for (int64_t d : array.shape) {
    std::optional<int64_t> next = checkedMul(count, d);
    if (!next)
      return makeError(name, "shape " + formatShape(array.shape) +
                                 " has too many elements (the count overflows int64)");
    count = *next;
  }
  std::optional<int64_t> bytes = checkedMul(count, static_cast<int64_t>(array.elementSize()));
  if (!bytes)
    return makeError(name, "shape " + formatShape(array.shape) + " of " +
                               getNpyDTypeName(array.dtype) +
                               " is too large (its byte size overflows int64)");
  if (static_cast<uint64_t>(*bytes) != payload.size())
    return makeError(name, "expected " + std::to_string(*bytes) + " bytes of data but found " +
                               std::to_string(payload.size()));
  array.bytes.assign(payload.begin(), payload.end());
  result = std::move(array);
  return Status::success();
}

Status mlir::neo::loadNpyFile(const std::string &path, NpyArray &array, uint64_t maxBytes) {
  std::string contents;
  if (Status s = readWholeFile(path, contents, maxBytes); !s.ok())
    return s;
  return decodeNpy(contents.data(), contents.size(), path, array);
}

//===----------------------------------------------------------------------===//
// encodeNpy
//===----------------------------------------------------------------------===//

/// The magic string, version, header length and header of `array`, laid out
/// as numpy (>= 1.23) writes them.
static std::string makePreamble(const NpyArray &array) {
  std::string dict = array.dtype == ElementType::BF16  ? "{'descr': '<u"
                     : isFloatElementType(array.dtype) ? "{'descr': '<f"
                                                       : "{'descr': '<i";
  dict += std::to_string(array.elementSize());
  dict += "', 'fortran_order': False, 'shape': " + formatShape(array.shape) + ", }";
  // Room for the first dim to grow in place (numpy's GROWTH_AXIS_MAX_DIGITS).
  if (!array.shape.empty())
    dict.append(21 - std::min<size_t>(21, std::to_string(array.shape[0]).size()), ' ');
  unsigned major = 1;
  size_t lengthSize = 2;
  size_t unpadded = kMagicSize + 2 + lengthSize + dict.size() + 1;
  size_t padding = kAlign - unpadded % kAlign;
  if (dict.size() + 1 + padding > 0xffff) {
    major = 2;
    lengthSize = 4;
    unpadded = kMagicSize + 2 + lengthSize + dict.size() + 1;
    padding = kAlign - unpadded % kAlign;
  }
  uint32_t headerLength = static_cast<uint32_t>(dict.size() + padding + 1);
  std::string preamble(kMagic, kMagicSize);
  preamble.push_back(static_cast<char>(major));
  preamble.push_back(0);
  for (size_t i = 0; i < lengthSize; ++i)
    preamble.push_back(static_cast<char>((headerLength >> (8 * i)) & 0xff));
  preamble += dict;
  preamble.append(padding, ' ');
  preamble.push_back('\n');
  return preamble;
}

/// Checks that `array.bytes` holds exactly its shape's elements.
static Status checkWritable(const NpyArray &array, const std::string &name) {
  if (!isNpyElementType(array.dtype))
    return makeError(
        name,
        std::string("cannot write ") + getElementTypeName(array.dtype) +
            " elements as .npy (float16, bfloat16 as its bits, float32, float64, int32 and int64 "
            "only)");
  int64_t count = 1;
  for (int64_t d : array.shape) {
    if (d < 0)
      return makeError(name, "cannot write an array with a negative dim: shape " +
                                 formatShape(array.shape));
    std::optional<int64_t> next = checkedMul(count, d);
    if (!next)
      return makeError(name, "cannot write shape " + formatShape(array.shape) +
                                 ": the element count overflows int64");
    count = *next;
  }
  std::optional<int64_t> size = checkedMul(count, static_cast<int64_t>(array.elementSize()));
  if (!size || static_cast<uint64_t>(*size) != array.bytes.size())
    return makeError(name, "cannot write shape " + formatShape(array.shape) + " of " +
                               getNpyDTypeName(array.dtype) + " from " +
                               std::to_string(array.bytes.size()) + " bytes of data");
  return Status::success();
}

Status mlir::neo::encodeNpy(const NpyArray &array, const std::string &name, std::string &file) {
  if (Status s = checkWritable(array, name); !s.ok())
    return s;
  file = makePreamble(array);
  file.append(array.bytes.data(), array.bytes.size());
  return Status::success();
}

Status mlir::neo::encodeNpyHeader(const NpyArray &array, const std::string &name,
                                  std::string &header) {
  if (Status s = checkWritable(array, name); !s.ok())
    return s;
  header = makePreamble(array);
  return Status::success();
}

Status mlir::neo::saveNpyFile(const std::string &path, const NpyArray &array) {
  if (Status s = checkWritable(array, path); !s.ok())
    return s;
  std::string preamble = makePreamble(array);
  return writeFileAtomically(path,
                             {preamble, std::string_view(array.bytes.data(), array.bytes.size())});
}
