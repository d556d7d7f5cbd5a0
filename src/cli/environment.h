// The environment variables pe reads: the library reads none, so the CLI
// turns them into the library's options (core/base/runtime_options.h) and the
// dispatch cap (core/base/cpu_dispatch.h). docs/cli.md, "Environment".
#pragma once

namespace pe::cli {

/// Sets the runtime options and the ISA cap from PE_NO_MMAP,
/// PE_HDF5_PROBE_SECONDS, PE_DOT_MEMORY_BUDGET, PE_DOT_READ_AHEAD,
/// PE_VERIFY_NO_FUSED and PE_ISA. Throws pe::Error (usage) naming the
/// variable for a value outside its documented form (docs/cli.md).
void ApplyEnvironment();

}  // namespace pe::cli
