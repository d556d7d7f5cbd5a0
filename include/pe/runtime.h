// pe/runtime.h: settings of the library that are not part of a request:
// how files are read, how long the HDF5 probe may run, the dot product's
// memory. The library reads no environment variable; a program sets these
// (the CLI from PE_NO_MMAP, PE_HDF5_PROBE_SECONDS, PE_DOT_MEMORY_BUDGET,
// PE_DOT_READ_AHEAD, PE_VERIFY_NO_FUSED and PE_ISA: docs/cli.md, "Environment").
#pragma once

#include <pe/export.h>

#include <cstdint>
#include <string>

namespace pe {

struct RuntimeOptions {
  /// Read tables with pread instead of mapping them (the same values).
  bool no_mmap = false;
  /// Seconds of CPU, and of wall time, the forked HDF5 probe may take.
  unsigned hdf5_probe_seconds = 10;
  /// The dot product's memory budget in bytes (0: 768 MiB).
  std::int64_t dot_memory_budget = 0;
  /// The dot product reads the next row segment while it transforms one.
  bool dot_read_ahead = true;
  /// Verify's AVX-512 filter steps the reference's recurrence in its own
  /// loop (off: the reference's rows are written, then read back; the
  /// same report).
  bool verify_fused_filter = true;
  /// The widest vector instructions the analyses may use: "scalar",
  /// "avx2" or "avx512" (the same bytes on every path; for A/B runs); empty:
  /// the best the CPU has.
  std::string isa;
};

/// The options in effect (the defaults until SetRuntimeOptions).
PE_API const RuntimeOptions& GetRuntimeOptions();

/// Replaces the options; set them before the calls they are meant for
/// (not while another thread reads a table). Throws pe::Error (kUsage,
/// naming "isa") for an unknown isa, leaving the options as they were.
PE_API void SetRuntimeOptions(const RuntimeOptions& options);

}  // namespace pe
