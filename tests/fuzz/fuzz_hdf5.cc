// libFuzzer target: the hdf5 reader (see fuzz_reader.h for the contract).
// The reader probes each file in a child process (hdf5.cc, ProbeInChild):
// a crash or hang inside the HDF5 library must become a pe::Error, so a
// sanitizer report from the child is printed but is not a finding; the
// parent surviving it is what this target checks.
#include <pe/runtime.h>

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pe::RuntimeOptions options = pe::GetRuntimeOptions();
  options.hdf5_probe_seconds = 2;
  pe::SetRuntimeOptions(options);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return pe::fuzz::FuzzOne(pe::Format::kHdf5, data, size);
}
