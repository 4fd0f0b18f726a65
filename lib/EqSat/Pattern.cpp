//===- Pattern.cpp - Patterns: s-expression parser and builders -----------===//
//
//   pattern := atom | '(' head pattern* ')'
//   atom    := '?' name | head
//   head    := name | name ':' number
//
// Whitespace separates tokens; ';' starts a comment to the end of the line.
//
//===----------------------------------------------------------------------===//
#include "neo/EqSat/EGraph.h"

#include <cassert>
#include <cctype>

using namespace neo::eqsat;

namespace {

constexpr unsigned kNoNode = ~0u;
constexpr unsigned kMaxDepth = 2000;

std::string_view stripQuestionMark(std::string_view name) {
  if (!name.empty() && name.front() == '?')
    name.remove_prefix(1);
  return name;
}

/// Parses `-`? (decimal | 0x hex) into two's complement; false on a bad
/// digit or overflow.
bool parseNumber(std::string_view text, uint64_t &value) {
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  unsigned base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty())
    return false;
  uint64_t result = 0;
  for (char c : text) {
    unsigned digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return false;
    if (result > (UINT64_MAX - digit) / base)
      return false;
    result = result * base + digit;
  }
  if (negative) {
    if (result > (uint64_t(1) << 63))
      return false;
    result = ~result + 1;
  }
  value = result;
  return true;
}

class Parser {
public:
  Parser(SymbolTable &symbols, std::string_view text, Pattern &pattern,
         bool fixedVars)
      : symbols(symbols), text(text), pattern(pattern), fixedVars(fixedVars) {}

  bool parse() {
    skipSpace();
    if (pos == text.size())
      return fail("empty pattern");
    unsigned root;
    if (!parseExpr(root, 0))
      return false;
    skipSpace();
    if (pos != text.size())
      return fail(text[pos] == ')' ? "unbalanced parentheses: unexpected ')'"
                                   : "unexpected input after the pattern");
    pattern.setRoot(root);
    return true;
  }

  std::string error;

private:
  bool fail(const std::string &message) {
    error = "offset " + std::to_string(pos) + ": " + message;
    return false;
  }

  void skipSpace() {
    while (pos < text.size()) {
      char c = text[pos];
      if (c == ';') {
        while (pos < text.size() && text[pos] != '\n')
          ++pos;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos;
      } else {
        break;
      }
    }
  }

  std::string_view token() {
    size_t begin = pos;
    while (pos < text.size()) {
      char c = text[pos];
      if (c == '(' || c == ')' || c == ';' ||
          std::isspace(static_cast<unsigned char>(c)))
        break;
      ++pos;
    }
    return text.substr(begin, pos - begin);
  }

  /// Splits `name:123` into a name and data.
  bool parseHead(std::string_view tok, std::string_view &name,
                 std::optional<uint64_t> &data) {
    name = tok;
    data.reset();
    size_t colon = tok.rfind(':');
    if (colon == std::string_view::npos || colon == 0 ||
        colon + 1 == tok.size())
      return true;
    std::string_view suffix = tok.substr(colon + 1);
    char first = suffix.front();
    bool numeric = std::isdigit(static_cast<unsigned char>(first)) ||
                   (first == '-' && suffix.size() > 1 &&
                    std::isdigit(static_cast<unsigned char>(suffix[1])));
    if (!numeric)
      return true;
    uint64_t value;
    if (!parseNumber(suffix, value))
      return fail("invalid data '" + std::string(suffix) + "' in '" +
                  std::string(tok) + "'");
    name = tok.substr(0, colon);
    data = value;
    return true;
  }

  bool parseVar(std::string_view tok, unsigned &out) {
    std::string_view name = stripQuestionMark(tok);
    if (name.empty())
      return fail("a variable needs a name");
    if (fixedVars && !pattern.varIndex(name))
      return fail("variable ?" + std::string(name) +
                  " does not occur in the left-hand side");
    out = pattern.addVar(std::string(name));
    return true;
  }

  bool parseExpr(unsigned &out, unsigned depth) {
    if (depth > kMaxDepth)
      return fail("pattern nested too deeply");
    skipSpace();
    if (pos == text.size())
      return fail("unbalanced parentheses: missing ')'");
    char c = text[pos];
    if (c == ')')
      return fail("unbalanced parentheses: unexpected ')'");
    if (c != '(') {
      std::string_view tok = token();
      if (tok.front() == '?')
        return parseVar(tok, out);
      std::string_view name;
      std::optional<uint64_t> data;
      if (!parseHead(tok, name, data))
        return false;
      out = pattern.addNode(symbols.intern(name), {}, data.value_or(0));
      return true;
    }

    ++pos; // '('
    skipSpace();
    if (pos == text.size())
      return fail("unbalanced parentheses: missing ')'");
    if (text[pos] == ')')
      return fail("empty list '()'");
    if (text[pos] == '(')
      return fail("expected an operator name after '('");
    std::string_view tok = token();
    if (tok.front() == '?')
      return fail("a variable (" + std::string(tok) +
                  ") cannot be an operator");
    std::string_view name;
    std::optional<uint64_t> data;
    if (!parseHead(tok, name, data))
      return false;
    std::vector<unsigned> children;
    while (true) {
      skipSpace();
      if (pos == text.size())
        return fail("unbalanced parentheses: missing ')'");
      if (text[pos] == ')') {
        ++pos;
        break;
      }
      unsigned child;
      if (!parseExpr(child, depth + 1))
        return false;
      children.push_back(child);
    }
    out = pattern.addNode(symbols.intern(name), std::move(children), data);
    return true;
  }

  SymbolTable &symbols;
  std::string_view text;
  Pattern &pattern;
  bool fixedVars;
  size_t pos = 0;
};

} // namespace

std::optional<Pattern> Pattern::parse(SymbolTable &symbols,
                                      std::string_view text,
                                      std::string *error) {
  return parseImpl(symbols, text, error, nullptr);
}

std::optional<Pattern>
Pattern::parseImpl(SymbolTable &symbols, std::string_view text,
                   std::string *error,
                   const std::vector<std::string> *fixedVars) {
  Pattern pattern;
  if (fixedVars) {
    pattern.varNames = *fixedVars;
    pattern.varNodes.assign(fixedVars->size(), kNoNode);
  }
  Parser parser(symbols, text, pattern, fixedVars != nullptr);
  if (!parser.parse()) {
    if (error)
      *error = parser.error;
    return std::nullopt;
  }
  return pattern;
}

std::optional<unsigned> Pattern::varIndex(std::string_view name) const {
  name = stripQuestionMark(name);
  for (size_t i = 0; i < varNames.size(); ++i)
    if (varNames[i] == name)
      return static_cast<unsigned>(i);
  return std::nullopt;
}

unsigned Pattern::addVar(std::string name) {
  std::string_view bare = stripQuestionMark(name);
  unsigned var;
  if (std::optional<unsigned> existing = varIndex(bare)) {
    var = *existing;
    if (varNodes[var] != kNoNode)
      return varNodes[var];
  } else {
    var = static_cast<unsigned>(varNames.size());
    varNames.emplace_back(bare);
    varNodes.push_back(kNoNode);
  }
  Node node;
  node.isVar = true;
  node.var = var;
  unsigned index = static_cast<unsigned>(nodes.size());
  nodes.push_back(std::move(node));
  varNodes[var] = index;
  if (!explicitRoot)
    rootIndex = index;
  return index;
}

unsigned Pattern::addNode(Symbol op, std::vector<unsigned> children,
                          std::optional<uint64_t> data) {
  unsigned index = static_cast<unsigned>(nodes.size());
  for ([[maybe_unused]] unsigned child : children)
    assert(child < index && "children must be added before their parent");
  Node node;
  node.op = op;
  node.data = data;
  node.children = std::move(children);
  nodes.push_back(std::move(node));
  if (!explicitRoot)
    rootIndex = index;
  return index;
}
