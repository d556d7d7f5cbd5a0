// The three BLAS routines pe dot uses, from OpenBLAS loaded on first use.
//
// Why not link it: OpenBLAS's pthread build starts a thread per core when
// the library is loaded, and those threads spin for a while. Linked into pe,
// that cost every command (pe generate, pe verify, ...) a slice of its two
// cores and ~2.5 ms of start-up, for routines only `pe dot` calls. Loaded
// here, with OPENBLAS_NUM_THREADS=1 set first (pe runs each GEMM on one
// thread and parallelises over blocks itself), nobody else pays.
//
// Contract: Blas() returns the routines, loading the library once (thread-
// safe); it throws pe::Error (kInternal, "OpenBLAS: cannot load the
// library: <dlerror>") when it cannot be loaded, and std::bad_alloc when an
// address-space limit (ulimit -v) leaves no room for OpenBLAS's work buffer
// (OpenBLAS would spin forever). The signatures are those of <cblas.h>.
#pragma once

#include <cblas.h>

namespace pe {

struct BlasRoutines {
  decltype(&cblas_dgemm) dgemm;
  decltype(&cblas_sgemm) sgemm;
  decltype(&cblas_dsyrk) dsyrk;
};

const BlasRoutines& Blas();

}  // namespace pe
