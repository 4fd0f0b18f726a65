//===- Runner.cpp - Stop reasons and run reports --------------------------===//
//
// runRewrites itself is a template (EGraphImpl.h).
//
//===----------------------------------------------------------------------===//
#include "neo/EqSat/EGraph.h"

#include <algorithm>
#include <cstdio>

using namespace neo::eqsat;

const char *neo::eqsat::stringifyStopReason(StopReason reason) {
  switch (reason) {
  case StopReason::Saturated:
    return "saturated";
  case StopReason::NodeLimit:
    return "node limit";
  case StopReason::IterationLimit:
    return "iteration limit";
  case StopReason::TimeLimit:
    return "time limit";
  }
  return "unknown";
}

std::string RunReport::str() const {
  size_t width = 4;
  for (const RuleStats &rule : rules)
    width = std::max(width, rule.name.size());
  std::string out;
  char line[256];
  for (const RuleStats &rule : rules) {
    out += "  ";
    out += rule.name;
    out.append(width - rule.name.size(), ' ');
    std::snprintf(line, sizeof(line),
                  "  matches %zu  applied %zu  bans %zu\n", rule.matches,
                  rule.applied, rule.bans);
    out += line;
  }
  std::snprintf(line, sizeof(line),
                "%s after %zu iteration%s: %zu nodes, %zu classes, %.3f s\n",
                stringifyStopReason(reason), iterations,
                iterations == 1 ? "" : "s", nodes, classes, seconds);
  out += line;
  return out;
}
