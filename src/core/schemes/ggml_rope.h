// llama.cpp's RoPE as its CPU kernel computes it: ggml's float32 recipe
// (ggml/src/ggml-cpu/ops.cpp, ggml_rope_cache_init / ggml_mrope_cache_init /
// rope_yarn, and ggml/src/ggml.c ggml_rope_yarn_corr_dims, llama.cpp
// release v0.4.0, source 80fb11ac as shipped by node-llama-cpp 3.21.1):
//
//   theta_scale = powf(freq_base, -2.0f/n_dims)
//   theta_0     = (float) p;  theta_{i+1} = theta_i * theta_scale   (float)
//   theta_e     = theta_i / freq_factors[i]                         (float)
//   theta       = freq_scale·theta_e, or with ext_factor != 0 the YaRN mix
//                 fmaf(theta_interp, 1 − r, theta_e·r), r = ramp(i)·ext_factor,
//                 and mscale = attn_factor·fmaf(0.1, logf(1/freq_scale), 1)
//   cos, sin    = cosf(theta)·mscale, sinf(theta)·mscale
//
// every operation in float32, in this order; the two fused multiply-adds
// are those of the shipped builds for FMA targets (ggml-cpu-haswell and
// later: the compiler contracts them), which every x86-64 CPU since 2013
// runs; the x64/sse42/sandybridge/ivybridge builds round the product first. `pe generate --semantics
// llama.cpp` writes these values (float32 and narrower tables; a float64
// table holds the exact values of the same formula, which is what `pe
// verify` compares with). GgmlAngleFactor bounds how far the recipe's angle
// is from the exact one (docs/verify.md, "Tolerance"): the recurrence costs
// about one rounding of theta_scale's error per pair, i.e. grows with the
// pair index, not with |ln ω|.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/base/table.h"
#include "core/schemes/rotary_tables.h"

namespace pe {

/// ggml's rope modes (ggml.h GGML_ROPE_TYPE_*).
enum class GgmlRopeMode { kNorm = 0, kNeox = 2, kMrope = 8, kImrope = 40, kVision = 24 };

/// The parameters ggml_rope_ext / ggml_rope_multi take, as llama.cpp passes
/// them (llama-graph.cpp, llama-context.cpp), in the kernel's float32.
struct GgmlRopeParams {
  std::int64_t n_dims = 0;    ///< rotated channels (even)
  float freq_base = 10000;
  float freq_scale = 1;       ///< 1/factor (linear, YaRN)
  float ext_factor = 0;       ///< YaRN's ramp mix weight (llama.cpp: 1 for YaRN, else 0)
  float attn_factor = 1;      ///< the kernel's attn_factor (mscale before YaRN's own factor)
  float beta_fast = 32, beta_slow = 1;
  std::int64_t n_ctx_orig = 0;
  std::vector<float> freq_factors;  ///< empty, or n_dims/2 divisors (rope_freqs, longrope factors)
  GgmlRopeMode mode = GgmlRopeMode::kNeox;
  std::array<int, 4> sections{0, 0, 0, 0};  ///< ggml_rope_multi's sections (t, h, w, e)
};

/// ggml_rope_cache_init for position p: cache[2i] = cos, cache[2i+1] = sin
/// of pair i (n_dims/2 pairs), bit for bit as the CPU kernel computes them.
void GgmlRopeCache(const GgmlRopeParams& g, std::int64_t p, float* cache);

/// ggml_mrope_cache_init for positions (t, h, w, e) (modes kMrope, kImrope,
/// kVision): the same layout as GgmlRopeCache, n_dims/2 pairs, or for
/// kVision n_dims pairs (ggml's ne0 = 2·n_dims; pair i rotates x[i], x[i + n_dims]).
void GgmlMropeCache(const GgmlRopeParams& g, const std::array<std::int64_t, 4>& pos, float* cache);

/// Which of the four position streams pair i reads in ggml_mrope_cache_init
/// (0 = t, 1 = h, 2 = w, 3 = e).
int GgmlMropeStream(const GgmlRopeParams& g, std::int64_t pair);

/// The cos or sin table [rows, width] of the recipe for positions start + r,
/// in pe's `layout` (half, interleaved or cache), rounded from float32 to
/// the table's dtype as ggml stores a float16 result.
std::unique_ptr<RowSource> GgmlRotaryTable(TableInfo info, GgmlRopeParams g, RopeLayout layout, bool cosine,
                                           std::int64_t start);

/// The ramp mix weight ggml gives pair i (rope_yarn_ramp · ext_factor; 0
/// without YaRN), in float as the kernel computes it.
float GgmlRampMix(const GgmlRopeParams& g, std::int64_t pair);

/// An upper bound on |θ_recipe − θ_exact| / (2^-24·|θ_exact|) for pair
/// `pair`, where θ_exact = p·ω_i is the exact angle of the same formula:
/// the exponent −2/n_dims rounded (|ln ω_i|·u), powf (2u per power, i
/// powers), the i products of the recurrence (u each), the divisions by a
/// freq factor and products by freq_scale (u each) and, inside YaRN's ramp,
/// the mix (4u of the extrapolated angle, up to 4u/freq_scale of θ).
/// ggml's CUDA and Metal kernels take theta_base·powf(theta_scale, i) with
/// no recurrence: within the same bound less i units.
double GgmlAngleFactor(const GgmlRopeParams& g, std::int64_t pair);

}  // namespace pe
