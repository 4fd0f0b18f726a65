//===- TemporaryFiles.cpp - Removing temporaries when a tool dies ---------===//
//
// A fixed table (no allocation, no locks) so that the signal handler only
// reads atomics and calls unlink, rmdir, sigaction and raise, which are
// async-signal-safe.
//
//===----------------------------------------------------------------------===//
#include "neo/Support/TemporaryFiles.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unistd.h>

using namespace mlir;
using namespace mlir::neo;

namespace {

constexpr int kSlots = 256;
constexpr size_t kPathCapacity = 4096;

enum SlotState : int { Free = 0, Claimed = 1, Armed = 2 };

struct Slot {
  std::atomic<int> state{Free};
  bool isDirectory = false;
  char path[kPathCapacity];
};

Slot slots[kSlots];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction previousActions[sizeof(kSignals) / sizeof(kSignals[0])];

void removeAll() {
  for (Slot &slot : slots)
    if (slot.state.load(std::memory_order_acquire) == Armed && !slot.isDirectory)
      ::unlink(slot.path);
  // Directories after their files; a few passes for nested ones (a staging
  // directory with subdirectories), each removing the now-empty leaves.
  for (int pass = 0; pass < 4; ++pass)
    for (Slot &slot : slots)
      if (slot.state.load(std::memory_order_acquire) == Armed && slot.isDirectory)
        ::rmdir(slot.path);
}

void onSignal(int sig) {
  int saved = errno;
  removeAll();
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i)
    if (kSignals[i] == sig)
      ::sigaction(sig, &previousActions[i], nullptr);
  errno = saved;
  // Delivered when this handler returns (the signal is blocked in it): to the
  // previous handler, or the default action, which ends the process.
  ::raise(sig);
}

void onExit() { removeAll(); }

} // namespace

int mlir::neo::registerTemporary(const std::string &path, bool isDirectory) {
  if (path.empty() || path.size() >= kPathCapacity || path.find('\0') != std::string::npos)
    return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = Free;
    if (!slots[i].state.compare_exchange_strong(expected, Claimed, std::memory_order_acq_rel))
      continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].isDirectory = isDirectory;
    slots[i].state.store(Armed, std::memory_order_release);
    return i;
  }
  return -1;
}

void mlir::neo::unregisterTemporary(int handle) {
  if (handle >= 0 && handle < kSlots)
    slots[handle].state.store(Free, std::memory_order_release);
}

void mlir::neo::installTemporaryFileCleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
      struct sigaction current;
      if (::sigaction(kSignals[i], nullptr, &current) != 0)
        continue;
      // An ignored signal (nohup) stays ignored.
      if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN)
        continue;
      previousActions[i] = current;
      struct sigaction action;
      std::memset(&action, 0, sizeof(action));
      action.sa_handler = onSignal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESTART;
      ::sigaction(kSignals[i], &action, nullptr);
    }
    std::atexit(onExit);
  });
}

void mlir::neo::removeRegisteredTemporaries() { removeAll(); }
