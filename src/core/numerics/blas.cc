#include "core/numerics/blas.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstdlib>
#include <mutex>
#include <new>
#include <string>

#include "core/base/error.h"
#include "core/base/cpu_dispatch.h"

namespace pe {
namespace {

// Debian's runtime package (libopenblas0-pthread, -serial or -openmp,
// chosen by update-alternatives) provides this soname.
constexpr const char* kOpenBlasSoname = "libopenblas.so.0";

template <typename F>
F Symbol(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) throw Error(ErrorKind::kInternal, std::string("OpenBLAS: the library has no symbol ") + name);
  return reinterpret_cast<F>(p);
}

// Debian 12's OpenBLAS (0.3.21) picks its kernels by CPU model and does not
// know AMD's AVX-512 processors (Zen 4, Zen 5): on them it runs its AVX2
// (Haswell) kernels. Where the CPU has the AVX-512 subsets of OpenBLAS's
// SkylakeX kernels (F, CD, BW, DQ, VL), pe asks for those, as later
// OpenBLAS releases do for these CPUs: on the development VM's AMD EPYC
// they took 40% less CPU for the same GEMMs (sgemm and dgemm, docs/dot.md).
// A user's own OPENBLAS_CORETYPE is kept (setenv does not overwrite it).
void PreferAvx512Kernels() {
  if (cpu::Allows(cpu::Isa::kAvx512)) setenv("OPENBLAS_CORETYPE", "SKYLAKEX", 0);  // read by OpenBLAS when it loads
}

BlasRoutines Load() {
  setenv("OPENBLAS_NUM_THREADS", "1", 1);  // read by OpenBLAS when it loads
  PreferAvx512Kernels();
  void* lib = dlopen(kOpenBlasSoname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw Error(ErrorKind::kInternal, std::string("OpenBLAS: cannot load the library: ") + (why ? why : "dlopen failed"));
  }
  BlasRoutines r;
  r.dgemm = Symbol<decltype(r.dgemm)>(lib, "cblas_dgemm");
  r.sgemm = Symbol<decltype(r.sgemm)>(lib, "cblas_sgemm");
  r.dsyrk = Symbol<decltype(r.dsyrk)>(lib, "cblas_dsyrk");
  return r;  // the library stays loaded for the life of the process
}

// OpenBLAS maps its work buffer on a thread's first GEMM and, when the
// mapping fails (an address-space limit: ulimit -v), spins forever instead
// of failing. Under such a limit, each thread first checks that the room
// is there (a reservation, never touched: no memory is used) and reports
// out of memory otherwise. Measured with Debian's libopenblas0-pthread: a
// first GEMM grows the address space by about 330 MiB; 384 MiB is checked.
// Without a limit (the usual case, and containers' cgroups) nothing is done.
void CheckRoomForOpenBlasBuffer() {
  thread_local bool checked = false;
  if (checked) return;
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    static std::mutex one_at_a_time;  // two threads' reservations must not add up
    std::lock_guard<std::mutex> lock(one_at_a_time);
    constexpr std::size_t kRoom = std::size_t{384} << 20;
    void* p = mmap(nullptr, kRoom, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    munmap(p, kRoom);
  }
  checked = true;
}

}  // namespace

const BlasRoutines& Blas() {
  static const BlasRoutines routines = Load();
  CheckRoomForOpenBlasBuffer();
  return routines;
}

}  // namespace pe
