//===- BundleManifest.cpp - manifest.json: reading and writing ------------===//
//
// The manifest is parsed with nlohmann::json's SAX interface into a DOM of our
// own, which reports syntax errors with their line and column and rejects
// duplicate keys (which a DOM parse would silently resolve to the last), and
// works without exceptions (the full build compiles with -fno-exceptions).
// Every field is then checked with its path for messages.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/Support/BundleManifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::neo;
using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// The manifest structures
//===----------------------------------------------------------------------===//

uint64_t BundleBuffer::getNumElements() const {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<uint64_t>(d);
  return n;
}

std::string BundleBuffer::getTypeString() const {
  std::string s = getElementTypeName(dtype);
  s += "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char *mlir::neo::getBufferRoleName(BundleBuffer::Role role) {
  switch (role) {
  case BundleBuffer::Role::Input: return "input";
  case BundleBuffer::Role::Output: return "output";
  case BundleBuffer::Role::Temp: return "temp";
  }
  return "?";
}

size_t BundleArg::getParamSize() const { return kind == Kind::I32 || kind == Kind::F32 ? 4 : 8; }

const char *mlir::neo::getBundleArgKindName(BundleArg::Kind kind) {
  switch (kind) {
  case BundleArg::Kind::Buffer: return "buffer";
  case BundleArg::Kind::I32: return "i32";
  case BundleArg::Kind::I64: return "i64";
  case BundleArg::Kind::F32: return "f32";
  case BundleArg::Kind::F64: return "f64";
  }
  return "?";
}

std::string mlir::neo::getBundleArgKindPhrase(BundleArg::Kind kind) {
  const char *name = getBundleArgKindName(kind);
  return std::string(name[0] == 'b' ? "a " : "an ") + name;
}

std::vector<size_t> BundleManifest::getInputs() const {
  std::vector<size_t> r;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].role == BundleBuffer::Role::Input)
      r.push_back(i);
  return r;
}

std::vector<size_t> BundleManifest::getOutputs() const {
  std::vector<size_t> r;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].role == BundleBuffer::Role::Output)
      r.push_back(i);
  return r;
}

//===----------------------------------------------------------------------===//
// JSON: a DOM built from SAX events
//===----------------------------------------------------------------------===//

namespace {

/// Builds a json DOM from SAX events, rejecting duplicate keys and documents
/// nested more deeply than any manifest needs, and keeping the parser's
/// message (with line and column) on a syntax error.
class DomBuilder : public nlohmann::json_sax<json> {
public:
  explicit DomBuilder(json &root) : root(root) {}

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool v) override { return add(json(v)); }
  bool number_integer(number_integer_t v) override { return add(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(json(v)); }
  bool number_float(number_float_t v, const string_t &) override { return add(json(v)); }
  bool string(string_t &v) override { return add(json(std::move(v))); }
  bool binary(binary_t &) override { return failWith("binary values are not JSON"); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool key(string_t &k) override {
    Frame &f = stack.back();
    if (!f.keys.insert(k).second)
      return failWith(pathOfTop() + "duplicate key '" + k + "'");
    f.pendingKey = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string &, const nlohmann::json::exception &e) override {
    // "[json.exception.parse_error.101] parse error at line 2, column 3: ..."
    std::string what = e.what();
    if (size_t end = what.find("] "); what.rfind("[json.", 0) == 0 && end != std::string::npos)
      what = what.substr(end + 2);
    return failWith("not valid JSON: " + what);
  }

  std::string error;

private:
  static constexpr size_t kMaxDepth = 32;

  struct Frame {
    json *value;
    std::set<std::string> keys; // objects
    std::string pendingKey;     // objects: the key of the value being parsed
  };

  bool failWith(const std::string &message) {
    if (error.empty())
      error = message;
    return false;
  }
  /// "buffers[1].alias: " for the innermost open container ("" at the root).
  std::string pathOfTop() const {
    std::string path;
    for (size_t i = 0; i + 1 < stack.size(); ++i) {
      const json &v = *stack[i].value;
      if (v.is_object())
        path += (path.empty() ? "" : ".") + stack[i].pendingKey;
      else
        path += "[" + std::to_string(v.size() - 1) + "]";
    }
    return path.empty() ? path : path + ": ";
  }
  /// Puts `v` where the parser is, returning a pointer to it.
  json *place(json &&v) {
    if (stack.empty()) {
      root = std::move(v);
      return &root;
    }
    json &parent = *stack.back().value;
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json &slot = parent[stack.back().pendingKey];
    slot = std::move(v);
    return &slot;
  }
  bool add(json &&v) {
    place(std::move(v));
    return true;
  }
  bool open(json &&container) {
    if (stack.size() >= kMaxDepth)
      return failWith("nested more than " + std::to_string(kMaxDepth) + " levels deep");
    json *p = place(std::move(container));
    stack.push_back(Frame{p, {}, {}});
    return true;
  }
  bool close() {
    stack.pop_back();
    return true;
  }

  json &root;
  std::vector<Frame> stack;
};

/// A short description of a JSON value for messages: `a string "abc"`.
std::string describe(const json &v) {
  auto snippet = [](std::string s) {
    if (s.size() > 40)
      s = s.substr(0, 40) + "...";
    return s;
  };
  if (v.is_null())
    return "null";
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer())
    return "the integer " + v.dump();
  if (v.is_number_float())
    return "the number " + v.dump();
  if (v.is_string())
    return "the string " + snippet(v.dump());
  if (v.is_array())
    return "an array";
  return "an object";
}

//===----------------------------------------------------------------------===//
// The manifest checker
//===----------------------------------------------------------------------===//

/// Reads and checks a manifest's fields. Each method returns false after
/// recording the first error ("<file>: <path>: <message>").
class ManifestReader {
public:
  explicit ManifestReader(std::string file) : file(std::move(file)) {}

  bool read(const json &root, BundleManifest &m);
  /// The checks of read() that involve several fields, on a manifest built
  /// in memory: unique buffer names, alias targets, argument indices.
  bool checkBuilt(BundleManifest &m);
  std::string error;

private:
  bool fail(const std::string &path, const std::string &message) {
    if (error.empty())
      error = file + ": " + (path.empty() ? "" : path + ": ") + message;
    return false;
  }
  static std::string join(const std::string &path, const std::string &key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string at(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  /// Fails on keys of `object` not in `allowed`.
  bool checkKeys(const json &object, const std::string &path,
                 std::initializer_list<const char *> allowed);
  /// The member `key` of `object`: nullptr (and an error if `required`) when absent.
  const json *member(const json &object, const std::string &path, const char *key, bool required);
  bool getString(const json &v, const std::string &path, std::string &out);
  bool getInteger(const json &v, const std::string &path, int64_t lo, int64_t hi, int64_t &out);
  /// A number, or "inf", "+inf", "-inf" or "nan" (which JSON cannot spell).
  bool getReal(const json &v, const std::string &path, double &out);
  bool getFileName(const json &v, const std::string &path, std::string &out);
  bool getDims(const json &v, const std::string &path, bool isGrid, std::array<uint32_t, 3> &out);

  bool readBuffer(const json &v, const std::string &path, BundleBuffer &b);
  bool checkBuffers(BundleManifest &m);
  bool readLaunch(const json &v, const std::string &path, size_t numBuffers, BundleLaunch &l);
  bool readArg(const json &v, const std::string &path, size_t numBuffers, BundleArg &a);

  std::string file;
};

bool ManifestReader::checkKeys(const json &object, const std::string &path,
                               std::initializer_list<const char *> allowed) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (const char *k : allowed)
      known |= it.key() == k;
    if (!known) {
      std::string list;
      for (const char *k : allowed)
        list += std::string(list.empty() ? "" : ", ") + k;
      return fail(path, "unknown key '" + it.key() + "' (expected " + list + ")");
    }
  }
  return true;
}

const json *ManifestReader::member(const json &object, const std::string &path, const char *key,
                                   bool required) {
  auto it = object.find(key);
  if (it != object.end())
    return &*it;
  if (required)
    fail(path, std::string("missing key '") + key + "'");
  return nullptr;
}

bool ManifestReader::getString(const json &v, const std::string &path, std::string &out) {
  if (!v.is_string())
    return fail(path, "expected a string, found " + describe(v));
  out = v.get<std::string>();
  return true;
}

bool ManifestReader::getInteger(const json &v, const std::string &path, int64_t lo, int64_t hi,
                                int64_t &out) {
  if (!v.is_number_integer())
    return fail(path, "expected an integer, found " + describe(v));
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi) || (lo > 0 && u < static_cast<uint64_t>(lo)))
      return fail(path, std::to_string(u) + " is out of range [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
    out = static_cast<int64_t>(u);
    return true;
  }
  int64_t i = v.get<int64_t>();
  if (i < lo || i > hi)
    return fail(path, std::to_string(i) + " is out of range [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
  out = i;
  return true;
}

bool ManifestReader::getReal(const json &v, const std::string &path, double &out) {
  if (v.is_number()) {
    out = v.get<double>();
    return true;
  }
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s == "inf" || s == "+inf") {
      out = INFINITY;
      return true;
    }
    if (s == "-inf") {
      out = -INFINITY;
      return true;
    }
    if (s == "nan") {
      out = NAN;
      return true;
    }
  }
  return fail(path, "expected a number or \"inf\", \"-inf\" or \"nan\", found " + describe(v));
}

bool ManifestReader::getFileName(const json &v, const std::string &path, std::string &out) {
  if (!getString(v, path, out))
    return false;
  bool ok = !out.empty() && out.front() != '/' && out.find('\0') == std::string::npos;
  // No ".." component: the file must lie inside the bundle.
  for (size_t start = 0; ok && start <= out.size();) {
    size_t end = std::min(out.find('/', start), out.size());
    ok = out.compare(start, end - start, "..") != 0;
    start = end + 1;
  }
  if (!ok)
    return fail(path, "'" + out + "' is not a relative path inside the bundle");
  return true;
}

bool ManifestReader::getDims(const json &v, const std::string &path, bool isGrid,
                             std::array<uint32_t, 3> &out) {
  if (!v.is_array() || v.size() != 3)
    return fail(path, "expected an array of 3 positive integers, found " + describe(v) +
                          (v.is_array() ? " of " + std::to_string(v.size()) : ""));
  // The hardware limits of every CUDA device since compute capability 3.0.
  const int64_t gridLimits[3] = {2147483647, 65535, 65535};
  const int64_t blockLimits[3] = {1024, 1024, 64};
  for (size_t i = 0; i < 3; ++i) {
    int64_t d;
    if (!getInteger(v[i], at(path, i), 1, isGrid ? gridLimits[i] : blockLimits[i], d))
      return false;
    out[i] = static_cast<uint32_t>(d);
  }
  if (!isGrid && uint64_t(out[0]) * out[1] * out[2] > 1024)
    return fail(path, std::to_string(out[0]) + "x" + std::to_string(out[1]) + "x" +
                          std::to_string(out[2]) + " = " +
                          std::to_string(uint64_t(out[0]) * out[1] * out[2]) +
                          " threads, more than the 1024 a block may have");
  return true;
}

bool ManifestReader::read(const json &root, BundleManifest &m) {
  if (!root.is_object())
    return fail("", "expected an object, found " + describe(root));
  // The format and version first: a newer bundle fails on its version, not
  // on a field this reader does not know.
  const json *format = member(root, "", "format", true);
  if (!format)
    return false;
  if (!format->is_string() || format->get<std::string>() != "neo-bundle")
    return fail("format", "expected \"neo-bundle\", found " + describe(*format));
  const json *version = member(root, "", "version", true);
  if (!version)
    return false;
  if (!version->is_number_integer())
    return fail("version", "expected an integer, found " + describe(*version));
  if (*version != 1)
    return fail("version", "unsupported bundle format version " + version->dump() +
                               " (this runner reads version 1)");
  if (!checkKeys(root, "",
                 {"format", "version", "function", "chip", "sm_count", "ptx", "cubin", "buffers",
                  "launches"}))
    return false;

  const json *v;
  if (!(v = member(root, "", "function", true)) || !getString(*v, "function", m.function))
    return false;
  if (m.function.empty())
    return fail("function", "the name is empty");
  if (!(v = member(root, "", "chip", true)) || !getString(*v, "chip", m.chip))
    return false;
  {
    // sm_<digits>, optionally followed by one letter (sm_90a).
    size_t n = m.chip.size(), digits = 0;
    while (3 + digits < n && std::isdigit(static_cast<unsigned char>(m.chip[3 + digits])))
      ++digits;
    bool ok = m.chip.rfind("sm_", 0) == 0 && digits > 0 &&
              (3 + digits == n ||
               (3 + digits + 1 == n && std::islower(static_cast<unsigned char>(m.chip.back()))));
    if (!ok)
      return fail("chip", "expected a chip like \"sm_90\", found \"" + m.chip + "\"");
  }
  if ((v = member(root, "", "sm_count", false)) &&
      !getInteger(*v, "sm_count", 1, INT32_MAX, m.smCount))
    return false;
  if (!(v = member(root, "", "ptx", true)) || !getFileName(*v, "ptx", m.ptxFile))
    return false;
  if ((v = member(root, "", "cubin", false)) && !getFileName(*v, "cubin", m.cubinFile))
    return false;

  const json *buffers = member(root, "", "buffers", true);
  if (!buffers)
    return false;
  if (!buffers->is_array())
    return fail("buffers", "expected an array, found " + describe(*buffers));
  for (size_t i = 0; i < buffers->size(); ++i) {
    m.buffers.emplace_back();
    if (!readBuffer((*buffers)[i], at("buffers", i), m.buffers.back()))
      return false;
  }
  if (!checkBuffers(m))
    return false;

  const json *launches = member(root, "", "launches", true);
  if (!launches)
    return false;
  if (!launches->is_array())
    return fail("launches", "expected an array, found " + describe(*launches));
  for (size_t i = 0; i < launches->size(); ++i) {
    m.launches.emplace_back();
    if (!readLaunch((*launches)[i], at("launches", i), m.buffers.size(), m.launches.back()))
      return false;
  }
  return true;
}

bool ManifestReader::readBuffer(const json &v, const std::string &path, BundleBuffer &b) {
  if (!v.is_object())
    return fail(path, "expected an object, found " + describe(v));
  if (!checkKeys(v, path, {"name", "role", "dtype", "shape", "fill", "alias"}))
    return false;
  const json *m;
  if (!(m = member(v, path, "name", true)) || !getString(*m, join(path, "name"), b.name))
    return false;
  // Names become file names (inputs/<name>.npy) and command-line keys.
  if (b.name.empty() || b.name == "." || b.name == ".." ||
      b.name.find_first_of(std::string("/=\0", 3)) != std::string::npos)
    return fail(join(path, "name"),
                "'" + b.name + "' is not a valid buffer name (non-empty, no '/' or '=')");

  std::string role;
  if (!(m = member(v, path, "role", true)) || !getString(*m, join(path, "role"), role))
    return false;
  if (role == "input")
    b.role = BundleBuffer::Role::Input;
  else if (role == "output")
    b.role = BundleBuffer::Role::Output;
  else if (role == "temp")
    b.role = BundleBuffer::Role::Temp;
  else
    return fail(join(path, "role"), "unknown role '" + role + "' (expected input, output or temp)");

  std::string dtype;
  if (!(m = member(v, path, "dtype", true)) || !getString(*m, join(path, "dtype"), dtype))
    return false;
  std::optional<ElementType> d = parseElementType(dtype);
  if (!d || !isFloatElementType(*d))
    return fail(join(path, "dtype"),
                "unknown dtype '" + dtype + "' (expected f16, bf16, f32 or f64)");
  b.dtype = *d;

  const json *shape = member(v, path, "shape", true);
  if (!shape)
    return false;
  std::string shapePath = join(path, "shape");
  if (!shape->is_array())
    return fail(shapePath, "expected an array of non-negative integers, found " + describe(*shape));
  uint64_t bytes = getElementTypeSize(b.dtype);
  bool overflow = false;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t dim;
    if (!getInteger((*shape)[i], at(shapePath, i), 0, INT64_MAX, dim))
      return false;
    b.shape.push_back(dim);
    overflow |= __builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes);
  }
  if (overflow)
    return fail(shapePath, b.getTypeString() + " has too many elements (its size "
                                               "overflows 64 bits)");
  if (bytes > kMaxBundleBufferBytes)
    return fail(shapePath, b.getTypeString() + " is " + std::to_string(bytes) +
                               " bytes, more than the 2^40 a buffer may have");

  if ((m = member(v, path, "fill", false))) {
    double fill;
    if (!getReal(*m, join(path, "fill"), fill))
      return false;
    if (b.role == BundleBuffer::Role::Input)
      return fail(join(path, "fill"), "an input has no fill (its data is copied in)");
    uint64_t bits = encodeElement(b.dtype, fill);
    if (std::isfinite(fill) && !std::isfinite(loadElement(b.dtype, &bits, 0)))
      return fail(join(path, "fill"), m->dump() + " overflows " + dtype);
    b.fill = fill;
  }

  if ((m = member(v, path, "alias", false))) {
    std::string aliasPath = join(path, "alias");
    if (!m->is_object())
      return fail(aliasPath, "expected an object {\"buffer\": index, \"offset_bytes\": "
                             "n}, found " +
                                 describe(*m));
    if (!checkKeys(*m, aliasPath, {"buffer", "offset_bytes"}))
      return false;
    const json *target = member(*m, aliasPath, "buffer", true);
    int64_t index;
    if (!target || !getInteger(*target, join(aliasPath, "buffer"), 0, INT64_MAX, index))
      return false;
    b.aliasOf = static_cast<size_t>(index);
    int64_t offset = 0;
    if (const json *o = member(*m, aliasPath, "offset_bytes", false))
      if (!getInteger(*o, join(aliasPath, "offset_bytes"), 0, INT64_MAX, offset))
        return false;
    b.aliasOffsetBytes = static_cast<uint64_t>(offset);
  }
  return true;
}

/// Checks what involves several buffers: unique names, alias targets.
bool ManifestReader::checkBuffers(BundleManifest &m) {
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const BundleBuffer &b = m.buffers[i];
    auto [it, inserted] = names.emplace(b.name, i);
    if (!inserted)
      return fail(join(at("buffers", i), "name"), "'" + b.name + "' is also the name of buffers[" +
                                                      std::to_string(it->second) + "]");
  }
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const BundleBuffer &b = m.buffers[i];
    if (!b.aliasOf)
      continue;
    std::string path = join(at("buffers", i), "alias");
    size_t t = *b.aliasOf;
    if (t >= m.buffers.size())
      return fail(join(path, "buffer"), "index " + std::to_string(t) + " out of range (" +
                                            std::to_string(m.buffers.size()) + " buffers)");
    if (t == i)
      return fail(join(path, "buffer"), "a buffer cannot alias itself");
    const BundleBuffer &target = m.buffers[t];
    if (target.aliasOf)
      return fail(join(path, "buffer"), "buffers[" + std::to_string(t) + "] ('" + target.name +
                                            "') is itself an alias; alias the buffer it views");
    size_t size = getElementTypeSize(b.dtype);
    if (b.aliasOffsetBytes % size)
      return fail(join(path, "offset_bytes"),
                  std::to_string(b.aliasOffsetBytes) + " is not a multiple of the " +
                      std::to_string(size) + "-byte " + getElementTypeName(b.dtype) + " elements");
    uint64_t end;
    if (__builtin_add_overflow(b.aliasOffsetBytes, b.getNumBytes(), &end) ||
        end > target.getNumBytes())
      return fail(path, "bytes [" + std::to_string(b.aliasOffsetBytes) + ", " +
                            std::to_string(b.aliasOffsetBytes) + " + " +
                            std::to_string(b.getNumBytes()) + ") lie outside the " +
                            std::to_string(target.getNumBytes()) + " bytes of buffers[" +
                            std::to_string(t) + "] ('" + target.name + "')");
  }
  return true;
}

bool ManifestReader::checkBuilt(BundleManifest &m) {
  if (m.function.empty())
    return fail("function", "the name is empty");
  if (!checkBuffers(m))
    return false;
  for (size_t i = 0; i < m.launches.size(); ++i)
    for (size_t j = 0; j < m.launches[i].args.size(); ++j) {
      const BundleArg &a = m.launches[i].args[j];
      if (a.kind == BundleArg::Kind::Buffer && a.buffer >= m.buffers.size())
        return fail(join(at(at("launches", i) + ".args", j), "buffer"),
                    "index " + std::to_string(a.buffer) + " out of range (" +
                        std::to_string(m.buffers.size()) + " buffers)");
    }
  return true;
}

bool ManifestReader::readLaunch(const json &v, const std::string &path, size_t numBuffers,
                                BundleLaunch &l) {
  if (!v.is_object())
    return fail(path, "expected an object, found " + describe(v));
  if (!checkKeys(v, path, {"kernel", "grid", "block", "shared_bytes", "args"}))
    return false;
  const json *m;
  if (!(m = member(v, path, "kernel", true)) || !getString(*m, join(path, "kernel"), l.kernel))
    return false;
  if (l.kernel.empty())
    return fail(join(path, "kernel"), "the name is empty");
  if (!(m = member(v, path, "grid", true)) ||
      !getDims(*m, join(path, "grid"), /*isGrid=*/true, l.grid))
    return false;
  if (!(m = member(v, path, "block", true)) ||
      !getDims(*m, join(path, "block"), /*isGrid=*/false, l.block))
    return false;
  if ((m = member(v, path, "shared_bytes", false))) {
    int64_t shared;
    if (!getInteger(*m, join(path, "shared_bytes"), 0, UINT32_MAX, shared))
      return false;
    l.sharedBytes = static_cast<uint32_t>(shared);
  }
  const json *args = member(v, path, "args", true);
  if (!args)
    return false;
  if (!args->is_array())
    return fail(join(path, "args"), "expected an array, found " + describe(*args));
  for (size_t i = 0; i < args->size(); ++i) {
    l.args.emplace_back();
    if (!readArg((*args)[i], at(join(path, "args"), i), numBuffers, l.args.back()))
      return false;
  }
  return true;
}

bool ManifestReader::readArg(const json &v, const std::string &path, size_t numBuffers,
                             BundleArg &a) {
  const char *expected = "expected one of {\"buffer\": index}, {\"i32\": v}, "
                         "{\"i64\": v}, {\"f32\": v}, {\"f64\": v}";
  if (!v.is_object() || v.size() != 1)
    return fail(path, std::string(expected) + ", found " + describe(v) +
                          (v.is_object() ? " of " + std::to_string(v.size()) + " keys" : ""));
  auto only = v.begin();
  const std::string &kind = only.key();
  const json &value = only.value();
  std::string valuePath = join(path, kind);
  if (kind == "buffer") {
    a.kind = BundleArg::Kind::Buffer;
    int64_t index;
    if (!getInteger(value, valuePath, INT64_MIN, INT64_MAX, index))
      return false;
    if (index < 0 || static_cast<uint64_t>(index) >= numBuffers)
      return fail(valuePath, "index " + std::to_string(index) + " out of range (" +
                                 std::to_string(numBuffers) + " buffers)");
    a.buffer = static_cast<size_t>(index);
    return true;
  }
  if (kind == "i32" || kind == "i64") {
    bool is32 = kind == "i32";
    a.kind = is32 ? BundleArg::Kind::I32 : BundleArg::Kind::I64;
    return getInteger(value, valuePath, is32 ? INT32_MIN : INT64_MIN, is32 ? INT32_MAX : INT64_MAX,
                      a.integer);
  }
  if (kind == "f32" || kind == "f64") {
    bool is32 = kind == "f32";
    a.kind = is32 ? BundleArg::Kind::F32 : BundleArg::Kind::F64;
    if (!getReal(value, valuePath, a.real))
      return false;
    if (is32 && std::isfinite(a.real) && std::fabs(a.real) > FLT_MAX &&
        std::isinf(static_cast<float>(a.real)))
      return fail(valuePath, value.dump() + " overflows f32");
    return true;
  }
  return fail(path, "unknown argument kind '" + kind + "' (" + expected + ")");
}

} // namespace

//===----------------------------------------------------------------------===//
// Reading and writing
//===----------------------------------------------------------------------===//

/// Parses and checks the manifest text; messages start with `name`.
Status mlir::neo::parseManifestJson(const std::string &name, const std::string &text,
                            BundleManifest &manifest) {
  json root;
  DomBuilder builder(root);
  bool parsed = json::sax_parse(text, &builder);
  if (!parsed || !builder.error.empty())
    return Status::error(Status::Code::Invalid,
                         name + ": " + (builder.error.empty() ? "not valid JSON" : builder.error));
  ManifestReader reader(name);
  if (!reader.read(root, manifest))
    return Status::error(Status::Code::Invalid, reader.error);
  return Status::success();
}

/// A real as JSON: a number, or "inf", "-inf" or "nan" (which JSON cannot spell).
static nlohmann::ordered_json realToJson(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  return v;
}

std::string mlir::neo::writeManifestJson(const BundleManifest &manifest) {
  using ojson = nlohmann::ordered_json;
  ojson m;
  m["format"] = "neo-bundle";
  m["version"] = 1;
  m["function"] = manifest.function;
  m["chip"] = manifest.chip;
  if (manifest.smCount > 0)
    m["sm_count"] = manifest.smCount;
  m["ptx"] = manifest.ptxFile;
  if (!manifest.cubinFile.empty())
    m["cubin"] = manifest.cubinFile;
  ojson buffers = ojson::array();
  for (const BundleBuffer &b : manifest.buffers) {
    ojson o;
    o["name"] = b.name;
    o["role"] = getBufferRoleName(b.role);
    o["dtype"] = getElementTypeName(b.dtype);
    o["shape"] = b.shape;
    if (b.fill)
      o["fill"] = realToJson(*b.fill);
    if (b.aliasOf)
      o["alias"] = {{"buffer", *b.aliasOf}, {"offset_bytes", b.aliasOffsetBytes}};
    buffers.push_back(std::move(o));
  }
  m["buffers"] = std::move(buffers);
  ojson launches = ojson::array();
  for (const BundleLaunch &l : manifest.launches) {
    ojson o;
    o["kernel"] = l.kernel;
    o["grid"] = l.grid;
    o["block"] = l.block;
    o["shared_bytes"] = l.sharedBytes;
    ojson args = ojson::array();
    for (const BundleArg &a : l.args) {
      const char *kind = getBundleArgKindName(a.kind);
      switch (a.kind) {
      case BundleArg::Kind::Buffer: args.push_back({{kind, a.buffer}}); break;
      case BundleArg::Kind::I32:
      case BundleArg::Kind::I64: args.push_back({{kind, a.integer}}); break;
      case BundleArg::Kind::F32:
      case BundleArg::Kind::F64: args.push_back({{kind, realToJson(a.real)}}); break;
      }
    }
    o["args"] = std::move(args);
    launches.push_back(std::move(o));
  }
  m["launches"] = std::move(launches);
  return m.dump(2) + "\n";
}

Status mlir::neo::checkManifest(const std::string &name, BundleManifest &manifest) {
  ManifestReader reader(name);
  if (!reader.checkBuilt(manifest))
    return Status::error(Status::Code::Invalid, reader.error);
  return Status::success();
}
