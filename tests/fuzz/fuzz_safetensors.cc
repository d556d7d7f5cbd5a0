// libFuzzer target: the safetensors reader (see fuzz_reader.h for the contract).
#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return pe::fuzz::FuzzOne(pe::Format::kSafetensors, data, size);
}
