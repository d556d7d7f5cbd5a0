#include "core/base/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "core/base/error.h"
#include <pe/runtime.h>

namespace pe {
namespace {

// The live mappings, for the SIGBUS handler: lock-free, since a handler may
// run on any thread at any time. A slot's `hi` is stored before its `lo`
// (release) and `lo` cleared first, so a handler that sees lo != 0 sees the
// matching hi.
constexpr int kSlots = 64;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<std::uintptr_t> lo{0}, hi{0};
  std::atomic<int> shrank{0};
};
Slot g_slots[kSlots];
struct sigaction g_previous;
std::uintptr_t g_page = 4096;
bool g_installed = false;

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  if (info->si_code > 0) {  // raised by an access, not sent by kill
    for (Slot& s : g_slots) {
      const std::uintptr_t lo = s.lo.load(std::memory_order_acquire);
      if (lo == 0 || addr < lo) continue;
      const std::uintptr_t hi = s.hi.load(std::memory_order_acquire);
      if (addr >= hi) continue;
      // The file ended before this page: zeros from here to the mapping's
      // end, so the access (repeated on return) and any later one succeed.
      const std::uintptr_t page = addr & ~(g_page - 1);
      void* z = ::mmap(reinterpret_cast<void*>(page), hi - page, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (z == MAP_FAILED) break;
      s.shrank.store(1, std::memory_order_release);
      return;
    }
  }
  // Not pe's: what would have happened without pe's handler.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction != nullptr) return g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    return g_previous.sa_handler(sig);
  }
  ::signal(SIGBUS, SIG_DFL);
  ::raise(SIGBUS);  // pending until this handler returns; then the default action
}

bool InstallHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page = static_cast<std::uintptr_t>(page);
    struct sigaction sa {};
    sa.sa_sigaction = OnSigbus;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    g_installed = ::sigaction(SIGBUS, &sa, &g_previous) == 0;
  });
  return g_installed;
}

int TakeSlot() {
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_slots[i].used.compare_exchange_strong(expected, true)) return i;
  }
  return -1;
}

}  // namespace

bool ChainForeignSigbus(void (*fn)(int)) {
  struct sigaction cur;
  if (::sigaction(SIGBUS, nullptr, &cur) != 0 || !(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != OnSigbus)
    return false;
  if (!(g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_handler == SIG_DFL) g_previous.sa_handler = fn;
  return true;
}

std::unique_ptr<MappedFile> MappedFile::Open(int fd, std::uint64_t size, std::uint64_t offset) {
  if (size == 0 || GetRuntimeOptions().no_mmap) return nullptr;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return nullptr;
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 62;
  if (size > kLimit || offset > kLimit) return nullptr;
  if (!InstallHandler()) return nullptr;
  const std::uint64_t lead = offset & static_cast<std::uint64_t>(g_page - 1);  // mmap takes whole pages
  const std::uint64_t mapped = (lead + size + g_page - 1) & ~static_cast<std::uint64_t>(g_page - 1);
  if (mapped > static_cast<std::uint64_t>(SIZE_MAX / 2)) return nullptr;
  const int slot = TakeSlot();
  if (slot < 0) return nullptr;
  void* p = ::mmap(nullptr, static_cast<std::size_t>(mapped), PROT_READ, MAP_SHARED, fd,
                   static_cast<off_t>(offset - lead));
  if (p == MAP_FAILED) {
    g_slots[slot].used.store(false);
    return nullptr;
  }
  Slot& s = g_slots[slot];
  s.shrank.store(0);
  s.hi.store(reinterpret_cast<std::uintptr_t>(p) + mapped, std::memory_order_release);
  s.lo.store(reinterpret_cast<std::uintptr_t>(p), std::memory_order_release);
  auto* base = static_cast<std::byte*>(p);
  return std::unique_ptr<MappedFile>(new MappedFile(base, base + lead, size, mapped, slot));
}

MappedFile::~MappedFile() {
  Slot& s = g_slots[slot_];
  s.lo.store(0, std::memory_order_release);
  s.hi.store(0, std::memory_order_release);
  ::munmap(base_, static_cast<std::size_t>(mapped_));
  s.used.store(false, std::memory_order_release);
}

void MappedFile::Release(std::uint64_t len) {
  // Each release interrupts the other cores that run this process (a TLB
  // flush; a VM exit each on a virtual machine): one per kReleaseBatch bytes
  // handed back, over the whole mapping (its pages not resident cost a
  // page-table walk), not one per block. A multi-pass reader (dot's column
  // panels) comes back to rows it released; they fault back in.
  if (pending_.fetch_add(len, std::memory_order_relaxed) + len < kReleaseBatch) return;
  if (pending_.exchange(0, std::memory_order_relaxed) < kReleaseBatch) return;  // another thread took it
  ::madvise(base_, static_cast<std::size_t>(mapped_), MADV_DONTNEED);
}

void MappedFile::Done(std::uint64_t len, const std::string& what) {
  Release(len);
  if (shrank()) ThrowInput(what, "file is truncated (it shrank while being read)");
}

bool MappedFile::shrank() const { return g_slots[slot_].shrank.load(std::memory_order_acquire) != 0; }

}  // namespace pe
