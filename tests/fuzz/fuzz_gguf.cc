// libFuzzer target: the GGUF reader (core/containers/gguf.h, gguf_tables.h) and
// the plan built from its metadata (ReadGgufArtifact). Contract as in
// fuzz_reader.h: every input either reads or throws pe::Error.
#include "core/models/artifact.h"
#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = pe::fuzz::ScratchPath();
  pe::fuzz::FuzzOne(pe::Format::kGguf, data, size);  // writes the file; the only tensor, if one
  try {
    pe::OpenOptions options;
    options.format = pe::Format::kGguf;
    const auto names = pe::ListTensorNames(path, options);
    for (std::size_t k = 0; k < names.size() && k < 4; ++k) {
      options.dataset = names[k];
      try {
        auto source = pe::OpenTable(path, options);
        const pe::TableInfo& info = source->info();
        if (info.rows <= 0 || info.cols <= 0) std::abort();
        std::vector<std::byte> buf(info.row_bytes());
        source->ReadRows(0, 1, buf.data());
        source->ReadRows(info.rows - 1, 1, buf.data());
      } catch (const pe::Error&) {
      }
    }
    const pe::ModelArtifact a = pe::ReadGgufArtifact(path);
    for (const auto& t : a.tensors) {
      try {
        t.open();
      } catch (const pe::Error&) {
      }
    }
  } catch (const pe::Error&) {
  }
  return 0;
}
