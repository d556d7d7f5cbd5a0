#include "core/analysis/blas.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "core/error.h"

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

BlasRoutines Load() {
  setenv("OPENBLAS_NUM_THREADS", "1", 1);  // read by OpenBLAS when it loads
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

}  // namespace

const BlasRoutines& Blas() {
  static const BlasRoutines routines = Load();
  return routines;
}

}  // namespace pe
