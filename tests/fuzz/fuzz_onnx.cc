// libFuzzer target: the ONNX reader (core/formats/onnx.h; contract as in
// fuzz_reader.h). The model usually holds several tensors, so each of the
// first few readable ones is opened by name and read, besides the default
// OpenTable (which lists them in its error).
#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pe::fuzz::FuzzOne(pe::Format::kOnnx, data, size);  // writes the scratch file
  try {
    pe::OpenOptions options;
    options.format = pe::Format::kOnnx;
    const std::vector<std::string> names = pe::ListTensorNames(pe::fuzz::ScratchPath(), options);
    for (std::size_t i = 0; i < names.size() && i < 4; ++i) {
      options.dataset = names[i];
      try {
        auto source = pe::OpenTable(pe::fuzz::ScratchPath(), options);
        const pe::TableInfo& info = source->info();
        if (info.rows <= 0 || info.cols <= 0) std::abort();
        pe::CheckedTableBytes(info.rows, info.cols, info.dtype);
        const std::int64_t n = std::min<std::int64_t>(info.rows, pe::BlockRows(info.row_bytes(), info.rows));
        std::vector<std::byte> buf(static_cast<std::size_t>(n) * info.row_bytes());
        source->ReadRows(0, n, buf.data());
        source->ReadRows(info.rows - n, n, buf.data());
      } catch (const pe::Error&) {
      }
    }
  } catch (const pe::Error&) {
  }
  return 0;
}
