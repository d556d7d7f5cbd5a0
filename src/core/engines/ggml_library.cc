// Loading a user's ggml through dlopen/dlsym (ggml_library.h: what is
// loaded, the ABI assumed and its guard) and running its rope kernel on the
// basis.
#include "core/engines/ggml_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/base/error.h"

namespace pe {
namespace {

namespace fs = std::filesystem;

// ggml.h's struct ggml_init_params, passed by value.
struct GgmlInitParams {
  std::size_t mem_size;
  void* mem_buffer;
  bool no_alloc;
};
constexpr int kTypeF32 = 0, kTypeI32 = 26;  // enum ggml_type
constexpr int kDeviceCpu = 0;               // GGML_BACKEND_DEVICE_TYPE_CPU
constexpr int kStatusSuccess = 0;           // GGML_STATUS_SUCCESS
constexpr int kModeMultiBit = 8;            // GGML_ROPE_TYPE_MROPE: ggml_rope_multi

using P = void*;  // every ggml handle (context, tensor, graph, backend, device, registry) is opaque here

void SilentLog(int, const char*, void*) {}

}  // namespace

struct GgmlLibrary::Api {
  P (*init)(GgmlInitParams) = nullptr;
  void (*free)(P) = nullptr;
  std::size_t (*tensor_overhead)() = nullptr;
  std::size_t (*graph_overhead)() = nullptr;
  P (*new_tensor_1d)(P, int, std::int64_t) = nullptr;
  P (*new_tensor_3d)(P, int, std::int64_t, std::int64_t, std::int64_t) = nullptr;
  P (*rope_ext)(P, P, P, P, int, int, int, float, float, float, float, float, float) = nullptr;
  P (*rope_multi)(P, P, P, P, int, int*, int, int, float, float, float, float, float, float) = nullptr;
  P (*new_graph)(P) = nullptr;
  void (*build_forward_expand)(P, P) = nullptr;
  void (*log_set)(void (*)(int, const char*, void*), void*) = nullptr;
  std::int64_t (*nelements)(P) = nullptr;
  const char* (*type_name)(int) = nullptr;
  std::size_t (*type_size)(int) = nullptr;
  const char* (*version)() = nullptr;
  const char* (*commit)() = nullptr;
  P (*alloc_ctx_tensors)(P, P) = nullptr;
  void (*tensor_set)(P, const void*, std::size_t, std::size_t) = nullptr;
  void (*tensor_get)(P, void*, std::size_t, std::size_t) = nullptr;
  void (*buffer_free)(P) = nullptr;
  int (*graph_compute)(P, P) = nullptr;
  P (*dev_by_type)(int) = nullptr;
  P (*dev_init)(P, const char*) = nullptr;
  const char* (*dev_description)(P) = nullptr;
  P (*load)(const char*) = nullptr;
  std::size_t (*reg_dev_count)(P) = nullptr;
  P (*reg_dev_get)(P, std::size_t) = nullptr;
  std::vector<void*> handles;  ///< lookup order: libggml (and its dependencies), libggml-base
  P backend = nullptr;
  mutable std::mutex mu;  ///< one graph at a time on the backend
};

GgmlLibrary::~GgmlLibrary() = default;

namespace {

void* OpenFile(const fs::path& path, const std::string& flag) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char* e = dlerror();
    ThrowUsage(flag, fmt::format("cannot load {}: {}", path.string(), e ? e : "dlopen failed"));
  }
  return h;
}

// libggml.so, else the one libggml.v*.so / libggml.so.* of the folder.
fs::path RegistryLibrary(const fs::path& dir, const std::string& flag) {
  if (fs::exists(dir / "libggml.so")) return dir / "libggml.so";
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if ((n.rfind("libggml.v", 0) == 0 && n.size() > 12 && n.compare(n.size() - 3, 3, ".so") == 0) ||
        n.rfind("libggml.so.", 0) == 0)
      found.push_back(e.path());
  }
  std::sort(found.begin(), found.end());
  if (found.empty()) ThrowUsage(flag, fmt::format("{} holds no libggml.so (nor libggml.v*.so): not a ggml build", dir.string()));
  if (found.size() > 1 && found[0].filename().string().rfind("libggml.so.", 0) != 0)
    ThrowUsage(flag, fmt::format("{} holds {} libggml.v*.so ({}, {}): say which with a folder of one",
                                 dir.string(), found.size(), found[0].filename().string(), found[1].filename().string()));
  return found[0];
}

template <typename F>
void Need(GgmlLibrary::Api& api, F*& fp, const char* name, const std::string& flag, const std::string& where) {
  void* s = nullptr;
  for (void* h : api.handles)
    if ((s = dlsym(h, name)) != nullptr) break;
  if (!s)
    ThrowUsage(flag, fmt::format("{}: no symbol {} (not a ggml whose C API pe knows; tested with ggml {})", where, name,
                                 kGgmlTestedVersion));
  std::memcpy(&fp, &s, sizeof s);  // POSIX: a dlsym result converts to a function pointer
}

void ResolveAll(GgmlLibrary::Api& a, const std::string& flag, const std::string& where) {
  Need(a, a.init, "ggml_init", flag, where);
  Need(a, a.free, "ggml_free", flag, where);
  Need(a, a.tensor_overhead, "ggml_tensor_overhead", flag, where);
  Need(a, a.graph_overhead, "ggml_graph_overhead", flag, where);
  Need(a, a.new_tensor_1d, "ggml_new_tensor_1d", flag, where);
  Need(a, a.new_tensor_3d, "ggml_new_tensor_3d", flag, where);
  Need(a, a.rope_ext, "ggml_rope_ext", flag, where);
  Need(a, a.rope_multi, "ggml_rope_multi", flag, where);
  Need(a, a.new_graph, "ggml_new_graph", flag, where);
  Need(a, a.build_forward_expand, "ggml_build_forward_expand", flag, where);
  Need(a, a.log_set, "ggml_log_set", flag, where);
  Need(a, a.nelements, "ggml_nelements", flag, where);
  Need(a, a.type_name, "ggml_type_name", flag, where);
  Need(a, a.type_size, "ggml_type_size", flag, where);
  Need(a, a.version, "ggml_version", flag, where);
  Need(a, a.commit, "ggml_commit", flag, where);
  Need(a, a.alloc_ctx_tensors, "ggml_backend_alloc_ctx_tensors", flag, where);
  Need(a, a.tensor_set, "ggml_backend_tensor_set", flag, where);
  Need(a, a.tensor_get, "ggml_backend_tensor_get", flag, where);
  Need(a, a.buffer_free, "ggml_backend_buffer_free", flag, where);
  Need(a, a.graph_compute, "ggml_backend_graph_compute", flag, where);
  Need(a, a.dev_by_type, "ggml_backend_dev_by_type", flag, where);
  Need(a, a.dev_init, "ggml_backend_dev_init", flag, where);
  Need(a, a.dev_description, "ggml_backend_dev_description", flag, where);
  Need(a, a.load, "ggml_backend_load", flag, where);
  Need(a, a.reg_dev_count, "ggml_backend_reg_dev_count", flag, where);
  Need(a, a.reg_dev_get, "ggml_backend_reg_dev_get", flag, where);
}

// The ABI guard: ggml's version, and the two enum values pe passes.
std::string CheckAbi(const GgmlLibrary::Api& a, const std::string& flag, const std::string& where) {
  const char* v = a.version();
  const std::string version = v ? v : "";
  int major = -1, minor = -1, patch = -1;
  if (std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch) != 3 || major != 0 || minor < kGgmlMinMinor)
    ThrowUsage(flag, fmt::format("{}: ggml_version() is '{}'; pe knows the C API of ggml 0.{}.0 and later 0.x "
                                 "(tested with {})",
                                 where, version, kGgmlMinMinor, kGgmlTestedVersion));
  const char* f32 = a.type_name(kTypeF32);
  const char* i32 = a.type_name(kTypeI32);
  if (!f32 || std::strcmp(f32, "f32") != 0 || !i32 || std::strcmp(i32, "i32") != 0 || a.type_size(kTypeF32) != 4 ||
      a.type_size(kTypeI32) != 4)
    ThrowUsage(flag, fmt::format("{}: ggml {} numbers its types otherwise (type {} is '{}', {} is '{}'; pe assumes "
                                 "f32 and i32)",
                                 where, version, kTypeF32, f32 ? f32 : "?", kTypeI32, i32 ? i32 : "?"));
  return version;
}

// The CPU device: a backend linked into libggml, else the best-scored
// libggml-cpu-*.so of the folder (what ggml_backend_load_best does, without
// its $GGML_BACKEND_PATH).
P CpuDevice(GgmlLibrary::Api& a, const fs::path& dir, std::string* library, const std::string& flag) {
  if (P dev = a.dev_by_type(kDeviceCpu)) return dev;
  std::vector<fs::path> variants;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("libggml-cpu-", 0) == 0 && n.size() > 15 && n.compare(n.size() - 3, 3, ".so") == 0)
      variants.push_back(e.path());
  }
  std::sort(variants.begin(), variants.end());
  fs::path best;
  int best_score = 0;
  for (const auto& path : variants) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) continue;
    int (*score)() = nullptr;
    void* s = dlsym(h, "ggml_backend_score");
    std::memcpy(&score, &s, sizeof s);
    const int sc = score ? score() : 0;
    if (sc > best_score) best_score = sc, best = path;
    dlclose(h);
  }
  if (best.empty())
    ThrowUsage(flag, fmt::format("{}: no CPU backend (libggml links none, and no libggml-cpu-*.so here runs on this CPU)",
                                 dir.string()));
  P reg = a.load(best.c_str());
  P dev = reg && a.reg_dev_count(reg) > 0 ? a.reg_dev_get(reg, 0) : nullptr;
  if (!dev) ThrowUsage(flag, fmt::format("{}: ggml_backend_load gave no device", best.string()));
  *library = best.filename().string();
  return dev;
}

}  // namespace

std::shared_ptr<GgmlLibrary> GgmlLibrary::Open(const std::string& lib_dir, const std::string& flag) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<GgmlLibrary>> loaded;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::path(lib_dir), ec);
  if (ec || !fs::is_directory(dir)) ThrowUsage(flag, fmt::format("'{}' is not a folder (the folder of libggml*.so)", lib_dir));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded.find(dir.string()); it != loaded.end()) return it->second;
  if (!fs::exists(dir / "libggml-base.so"))
    ThrowUsage(flag, fmt::format("{} holds no libggml-base.so: not a ggml build pe can load (ggml 0.{} or later splits "
                                 "libggml-base.so from libggml.so)",
                                 dir.string(), kGgmlMinMinor));
  std::shared_ptr<GgmlLibrary> lib(new GgmlLibrary());
  lib->api_ = std::make_unique<Api>();
  Api& a = *lib->api_;
  void* base = OpenFile(dir / "libggml-base.so", flag);
  lib->files_.push_back("libggml-base.so");
  if (fs::exists(dir / "libggml-cpu.so")) {
    OpenFile(dir / "libggml-cpu.so", flag);
    lib->files_.push_back("libggml-cpu.so");
  }
  const fs::path reg = RegistryLibrary(dir, flag);
  void* ggml = OpenFile(reg, flag);
  lib->files_.push_back(reg.filename().string());
  a.handles = {ggml, base};
  const std::string where = dir.string();
  ResolveAll(a, flag, where);
  a.log_set(SilentLog, nullptr);
  lib->version_ = CheckAbi(a, flag, where);
  lib->commit_ = a.commit() ? a.commit() : "";
  lib->cpu_library_ = fs::exists(dir / "libggml-cpu.so") ? "libggml-cpu.so" : "libggml (built in)";
  P dev = CpuDevice(a, dir, &lib->cpu_library_, flag);
  if (lib->cpu_library_.rfind("libggml-cpu-", 0) == 0) lib->files_.push_back(lib->cpu_library_);
  const char* desc = a.dev_description(dev);
  lib->device_ = desc ? desc : "";
  a.backend = a.dev_init(dev, nullptr);
  if (!a.backend) ThrowUsage(flag, fmt::format("{}: ggml_backend_dev_init failed for the CPU device", where));
  loaded.emplace(dir.string(), lib);
  return lib;
}

std::vector<float> GgmlLibrary::Probe(const GgmlRopeCall& c) const {
  const Api& a = *api_;
  const std::int64_t d = c.head_dim, L = static_cast<std::int64_t>(c.positions.size());
  const bool multi = (c.mode & kModeMultiBit) != 0;
  // What ggml would GGML_ASSERT (abort) on, refused first.
  if (d < 2 || d % 2 || d > 4096) ThrowUsage("head dim", fmt::format("{}: an even number in [2, 4096]", d));
  if (c.n_dims <= 0 || c.n_dims % 2 || c.n_dims > d) ThrowUsage("n_rot", fmt::format("{}: even, in [2, head dim {}]", c.n_dims, d));
  if (L < 1 || L * d * d > (std::int64_t{1} << 26)) ThrowUsage("--positions", fmt::format("{} positions of a {}-channel head: 1 to 2^26 entries", L, d));
  if (!c.freq_factors.empty() && c.freq_factors.size() < static_cast<std::size_t>(c.n_dims / 2))
    ThrowUsage("rope factors", fmt::format("{} factors, n_rot/2 = {} needed", c.freq_factors.size(), c.n_dims / 2));
  std::lock_guard<std::mutex> lock(a.mu);
  GgmlInitParams ip{a.tensor_overhead() * 8 + a.graph_overhead() + 1024, nullptr, true};
  P ctx = a.init(ip);
  if (!ctx) ThrowInput("ggml", "ggml_init failed");
  struct Guard {
    const Api& a;
    P ctx, buf = nullptr;
    ~Guard() {
      if (buf) a.buffer_free(buf);
      a.free(ctx);
    }
  } guard{a, ctx};
  P x = a.new_tensor_3d(ctx, kTypeF32, d, d, L);
  P pos = a.new_tensor_1d(ctx, kTypeI32, multi ? 4 * L : L);
  // ggml's CPU kernel reads a factor for every pair < head_dim/2 while
  // checking only n_dims/2: padded with 1 (no division) past the GGUF's.
  const std::size_t nff = c.freq_factors.empty() ? 0 : std::max(c.freq_factors.size(), static_cast<std::size_t>(d / 2));
  P ff = nff ? a.new_tensor_1d(ctx, kTypeF32, static_cast<std::int64_t>(nff)) : nullptr;
  std::array<int, 4> sections = c.sections;
  P y = multi ? a.rope_multi(ctx, x, pos, ff, c.n_dims, sections.data(), c.mode, c.n_ctx_orig, c.freq_base,
                             c.freq_scale, c.ext_factor, c.attn_factor, c.beta_fast, c.beta_slow)
              : a.rope_ext(ctx, x, pos, ff, c.n_dims, c.mode, c.n_ctx_orig, c.freq_base, c.freq_scale, c.ext_factor,
                           c.attn_factor, c.beta_fast, c.beta_slow);
  if (!y || a.nelements(y) != L * d * d)
    ThrowInput("ggml_rope", fmt::format("gave {} values, {} expected", y ? a.nelements(y) : 0, L * d * d));
  P graph = a.new_graph(ctx);
  a.build_forward_expand(graph, y);
  guard.buf = a.alloc_ctx_tensors(ctx, a.backend);
  if (!guard.buf) ThrowInput("ggml", fmt::format("cannot allocate the {} MiB of the probe", (2 * L * d * d * 4) >> 20));
  const std::size_t n = static_cast<std::size_t>(L * d * d);
  std::vector<float> host(n, 0.0f);
  for (std::int64_t r = 0; r < L; ++r)
    for (std::int64_t j = 0; j < d; ++j) host[static_cast<std::size_t>((r * d + j) * d + j)] = 1.0f;
  a.tensor_set(x, host.data(), 0, n * sizeof(float));
  std::vector<std::int32_t> pv(c.positions);
  if (multi) {  // llama.cpp's text tokens: t = h = w = p, e = 0 (llm_graph_input_pos)
    pv.resize(static_cast<std::size_t>(4 * L), 0);
    for (int s = 1; s < 3; ++s) std::copy(c.positions.begin(), c.positions.end(), pv.begin() + s * L);
  }
  a.tensor_set(pos, pv.data(), 0, pv.size() * sizeof(std::int32_t));
  if (ff) {
    std::vector<float> fv(nff, 1.0f);
    std::copy(c.freq_factors.begin(), c.freq_factors.end(), fv.begin());
    a.tensor_set(ff, fv.data(), 0, nff * sizeof(float));
  }
  const int status = a.graph_compute(a.backend, graph);
  if (status != kStatusSuccess) ThrowInput("ggml", fmt::format("graph compute failed (status {})", status));
  a.tensor_get(y, host.data(), 0, n * sizeof(float));
  return host;
}

}  // namespace pe
