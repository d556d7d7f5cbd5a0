// libFuzzer target: PyTorch zip checkpoints (zip container + the restricted
// unpickler + storages), as a table format and as a model artifact (see
// fuzz_set_reader.h).
#include "fuzz_set_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return pe::fuzz::FuzzSet(pe::Format::kTorch, pe::ReadTorchArtifact, data, size);
}
