//===- Target.cpp - What tuning records are specific to -------------------===//
#include "neo/Tuning/Target.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <fstream>
#include <thread>

using namespace mlir::neo;

std::string tuning::hostTarget(int64_t threads) {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](const char *f) { return features.lookup(f); };
  std::string isa = "generic";
  if (triple.isX86()) {
    if (has("avx512f"))
      isa = "avx512";
    else if (has("avx2") && has("fma"))
      isa = "avx2";
    else if (has("avx"))
      isa = "avx";
    else if (has("sse4.2"))
      isa = "sse4";
  } else if (triple.isAArch64()) {
    isa = has("sve") ? "sve" : "neon";
  }
  return triple.getArchName().str() + "-" + isa + "-" + llvm::sys::getHostCPUName().str() + "/" +
         std::to_string(threads) + "threads";
}

/// A sysfs cache size such as "48K" or "2048K" in bytes (0 if unreadable).
static int64_t readCacheSize(const std::string &dir) {
  std::ifstream in(dir + "/size");
  std::string text;
  if (!(in >> text) || text.empty())
    return 0;
  int64_t scale = 1;
  char unit = text.back();
  if (unit == 'K' || unit == 'M' || unit == 'G') {
    scale = unit == 'K' ? 1 << 10 : unit == 'M' ? 1 << 20 : 1 << 30;
    text.pop_back();
  }
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return 0;
    value = value * 10 + (c - '0');
  }
  return value * scale;
}

tuning::HostCaches tuning::hostCaches() {
  HostCaches caches;
  caches.cores = std::max(1u, std::thread::hardware_concurrency());
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream levelFile(dir + "/level"), typeFile(dir + "/type");
    int level = 0;
    std::string type;
    if (!(levelFile >> level) || !(typeFile >> type))
      break;
    if (type == "Instruction")
      continue;
    int64_t size = readCacheSize(dir);
    if (size <= 0)
      continue;
    if (level == 1)
      caches.l1 = size;
    else if (level == 2)
      caches.l2 = size;
    else if (level == 3)
      caches.l3 = size;
  }
  return caches;
}
