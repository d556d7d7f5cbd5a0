// hello_table: the pe library from an installed package (docs/library.md).
//
// Generates a RoPE table (Llama 3's scaling), writes it, reads it back,
// verifies the file against the exact reference named by its metadata, and
// prints one line. Uses only the public headers <pe/...>.
//
//   cmake -S examples -B build-ex -DCMAKE_PREFIX_PATH=/path/to/prefix
//   cmake --build build-ex && ./build-ex/hello_table [OUT.safetensors]
#include <cstdio>
#include <string>
#include <vector>

#include <pe/pe.h>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "hello_rope.safetensors";
  try {
    pe::Spec spec("rope");
    spec.Set("head_dim", 128).Set("max_len", 8192).Set("base", 500000.0);
    spec.Set("rope_scaling", "llama3").Set("factor", 8.0).Set("original_max_position_embeddings", 8192);
    pe::Table table = pe::GenerateTable(spec);

    // Into a buffer of ours: cos at position 4096.
    pe::RowStream& cos = table.tensor("cos");
    std::vector<float> row(static_cast<std::size_t>(cos.info().cols));
    cos.ReadRows(4096, 1, row.data(), row.size() * sizeof(float));

    pe::WriteTableFile(table, path);
    pe::Table back = pe::OpenTableFile(path);
    pe::VerifyResult report = pe::VerifyTable(back.tensor("cos"), pe::VerifyRequest{});

    std::printf("%s: %zu tensors, cos %lld x %lld %s, cos[4096][1] = %.9g, verify %s (%zu checks)\n", path.c_str(),
                back.size(), static_cast<long long>(cos.info().rows), static_cast<long long>(cos.info().cols),
                std::string(pe::DTypeName(cos.info().dtype)).c_str(), static_cast<double>(row[1]),
                report.passed ? "PASS" : "FAIL", report.checks.size());
    return report.passed ? 0 : 1;
  } catch (const pe::Error& e) {
    std::fprintf(stderr, "hello_table: error: %s\n", e.what());
    return 2;
  }
}
