// A user's ggml build, loaded with dlopen from the one directory the user
// names (`pe verify --engine llama.cpp=LIBDIR`), its C API only: every
// function is looked up with dlsym, never through ggml's headers, which pe
// does not build against. docs/verify.md, "llama.cpp probed directly".
//
// What is loaded, and from where (nothing else, and nothing a file names):
//
//   LIBDIR/libggml-base.so    the core (ggml_init, ggml_rope_ext, graphs)
//   LIBDIR/libggml-cpu.so     when present: a build whose CPU backend is a
//                             plain dependency of libggml (loaded first, so
//                             that libggml's NEEDED entry resolves to it)
//   LIBDIR/libggml.so, else the one LIBDIR/libggml.v*.so or libggml.so.*
//                             the backend registry
//   LIBDIR/libggml-cpu-*.so   a build with dynamic CPU variants (llama.cpp's
//                             GGML_BACKEND_DL releases): each scored with its
//                             ggml_backend_score, the best one registered with
//                             ggml_backend_load. pe does not call
//                             ggml_backend_load_all_from_path, which also
//                             loads the library named by $GGML_BACKEND_PATH.
//
// Symbols are looked up in libggml first, then its dependencies (dlsym on
// its handle searches them in load order), then libggml-base: a libggml
// that wraps a base function (a patched build, the test's shim) is the one
// called, as it would be in the engine.
//
// The ABI assumed (ggml.h / ggml-backend.h, checked against ggml 0.23.0 =
// llama.cpp v0.4.0 as node-llama-cpp 3.21.1 ships it, commit 80fb11ac):
//   - struct ggml_init_params {size_t mem_size; void* mem_buffer; bool
//     no_alloc;}, passed to ggml_init by value;
//   - enum ggml_type GGML_TYPE_F32 = 0, GGML_TYPE_I32 = 26, checked at load
//     with ggml_type_name and ggml_type_size ("f32"/"i32", 4 bytes);
//   - GGML_BACKEND_DEVICE_TYPE_CPU = 0, GGML_STATUS_SUCCESS = 0;
//   - the rope modes NORM 0, NEOX 2, MROPE 8, VISION 24, IMROPE 40;
//   - the signatures of ggml_rope_ext and ggml_rope_multi (float
//     parameters, sections as int[4]);
//   - a tensor is never read through struct ggml_tensor: data moves with
//     ggml_backend_tensor_set/get, sizes are checked with ggml_nelements.
// The guard: every symbol above present (a library without one is refused,
// naming it), ggml_version() present and 0.N.M with N >= kGgmlMinMinor (the
// versions whose rope and backend API is the one above); another version
// than the tested one is said in the report.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pe {

/// The ggml version pe was tested with, and the oldest minor version it
/// accepts (ggml_version() appeared with the split of libggml-base, the
/// registry and ggml_rope_multi's int[4] sections are older).
inline constexpr const char* kGgmlTestedVersion = "0.23.0";
inline constexpr int kGgmlMinMinor = 9;

/// One ggml rope call: ggml_rope_ext (mode 0 or 2) or ggml_rope_multi (modes
/// with bit 8) on the basis q = I of a head of `head_dim` channels at
/// `positions`, as llama.cpp calls it.
struct GgmlRopeCall {
  std::int64_t head_dim = 0;
  int n_dims = 0, mode = 2, n_ctx_orig = 0;
  float freq_base = 10000, freq_scale = 1, ext_factor = 0, attn_factor = 1, beta_fast = 32, beta_slow = 1;
  std::vector<float> freq_factors;      ///< empty, or >= n_dims/2 divisors (padded with 1 to head_dim/2)
  std::array<int, 4> sections{0, 0, 0, 0};
  std::vector<std::int32_t> positions;  ///< L positions (multi modes: t = h = w = p, e = 0)
};

/// A loaded ggml. Loading is once per directory per process; the libraries
/// stay loaded (ggml keeps global state, a dlclose is not safe).
class GgmlLibrary {
 public:
  /// Loads the libraries of `lib_dir`. Throws pe::Error (kUsage, naming
  /// `flag`) for a directory that is not one, lacks a library or a symbol,
  /// or holds a ggml of another ABI.
  static std::shared_ptr<GgmlLibrary> Open(const std::string& lib_dir, const std::string& flag);

  /// The probe [L, d, d] (row-major float32): out[r][j][k] = component k of
  /// the kernel's output for q = e_j at positions[r]. Throws pe::Error
  /// (kUsage) for parameters ggml would abort on, (kInput) when the kernel
  /// fails.
  std::vector<float> Probe(const GgmlRopeCall& call) const;

  const std::string& version() const { return version_; }
  const std::string& commit() const { return commit_; }
  const std::string& cpu_library() const { return cpu_library_; }  ///< the CPU backend's file name
  const std::string& device() const { return device_; }            ///< its description
  std::vector<std::string> files() const { return files_; }        ///< the libraries loaded, by name

  struct Api;  // the function pointers (ggml_library.cc)
  ~GgmlLibrary();

 private:
  GgmlLibrary() = default;
  std::unique_ptr<Api> api_;
  std::string version_, commit_, cpu_library_, device_;
  std::vector<std::string> files_;
};

}  // namespace pe
