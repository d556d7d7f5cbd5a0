// libFuzzer target: the .npz reader (zip container + NPY headers), as a
// table format and as a model artifact (see fuzz_set_reader.h).
#include "fuzz_set_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return pe::fuzz::FuzzSet(pe::Format::kNpz, pe::ReadNpzArtifact, data, size);
}
