#include "core/schemes/ggml_rope.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/schemes/rope_scaling.h"

// The recipe is float32 arithmetic in ggml's order: this file is compiled
// with -ffp-contract=off (CMakeLists.txt), so that no product and sum is
// fused into one rounding where the target has FMA.

namespace pe {
namespace {

// ggml-cpu/ops.cpp rope_yarn_ramp.
float YarnRamp(float low, float high, std::int64_t i0) {
  const float y = (static_cast<float>(i0 / 2) - low) / std::max(0.001f, high - low);
  return 1 - std::min(1.0f, std::max(0.0f, y));
}

struct KernelConstants {
  float theta_scale;
  float corr_dims[2];
};

KernelConstants ConstantsOf(const GgmlRopeParams& g) {
  KernelConstants k;
  k.theta_scale = std::pow(g.freq_base, -2.0f / static_cast<float>(g.n_dims));
  const auto [lo, hi] = GgmlYarnCorrDims(g.n_dims, g.n_ctx_orig, g.freq_base, g.beta_fast, g.beta_slow);
  k.corr_dims[0] = lo;
  k.corr_dims[1] = hi;
  return k;
}

// ggml-cpu/ops.cpp rope_yarn: cos and sin of one pair, times mscale.
void RopeYarn(float theta_extrap, const GgmlRopeParams& g, const KernelConstants& k, std::int64_t i0, float* c,
              float* s) {
  const float theta_interp = g.freq_scale * theta_extrap;
  float theta = theta_interp;
  float mscale = g.attn_factor;
  if (g.ext_factor != 0.0f) {
    const float ramp_mix = YarnRamp(k.corr_dims[0], k.corr_dims[1], i0) * g.ext_factor;
    // The shipped CPU builds for FMA targets (ggml-cpu-haswell and later,
    // piledriver, zen4; GCC contracts a*b + c by default) fuse the mix's
    // first product into its sum and the 0.1f*logf(..) + 1.0f of the
    // magnitude: theta = fma(theta_interp, 1 - ramp_mix, theta_extrap*ramp_mix),
    // one rounding fewer (disassembly of ggml_compute_forward_rope_flt<float>
    // in libggml-cpu-sapphirerapids.so, v0.4.0). The x64/sse42/sandybridge/
    // ivybridge builds round each product: within GgmlAngleFactor's bound.
    theta = std::fma(theta_interp, 1 - ramp_mix, theta_extrap * ramp_mix);
    mscale *= std::fma(0.1f, std::log(1.0f / g.freq_scale), 1.0f);
  }
  // Only what the caller asks for (a cos table needs no sinf).
  if (c) *c = std::cos(theta) * mscale;
  if (s) *s = std::sin(theta) * mscale;
}

float FreqFactor(const GgmlRopeParams& g, std::int64_t pair) {
  return g.freq_factors.empty() ? 1.0f : g.freq_factors[static_cast<std::size_t>(pair)];
}

}  // namespace

float GgmlRampMix(const GgmlRopeParams& g, std::int64_t pair) {
  if (g.ext_factor == 0.0f) return 0.0f;
  const KernelConstants k = ConstantsOf(g);
  return YarnRamp(k.corr_dims[0], k.corr_dims[1], 2 * pair) * g.ext_factor;
}

namespace {

// ggml_rope_cache_init for position p with the kernel's constants `k`:
// cos of pair i into cos_out[i], sin into sin_out[i] (either may be null).
void CacheRow(const GgmlRopeParams& g, const KernelConstants& k, std::int64_t p, float* cos_out, float* sin_out) {
  float theta = static_cast<float>(p);
  for (std::int64_t i0 = 0; i0 < g.n_dims; i0 += 2) {
    const float ff = FreqFactor(g, i0 / 2);
    const std::size_t i = static_cast<std::size_t>(i0 / 2);
    RopeYarn(theta / ff, g, k, i0, cos_out ? &cos_out[i] : nullptr, sin_out ? &sin_out[i] : nullptr);
    theta *= k.theta_scale;
  }
}

}  // namespace

void GgmlRopeCache(const GgmlRopeParams& g, std::int64_t p, float* cache) {
  const KernelConstants k = ConstantsOf(g);
  std::vector<float> c(static_cast<std::size_t>(g.n_dims / 2)), sn(c.size());
  CacheRow(g, k, p, c.data(), sn.data());
  for (std::size_t i = 0; i < c.size(); ++i) cache[2 * i] = c[i], cache[2 * i + 1] = sn[i];
}

int GgmlMropeStream(const GgmlRopeParams& g, std::int64_t pair) {
  const auto& sec = g.sections;
  const int sect_dims = sec[0] + sec[1] + sec[2] + sec[3];
  const int sec_w = sec[0] + sec[1];
  const int sector = sect_dims > 0 ? static_cast<int>(pair % sect_dims) : 0;
  if (g.mode == GgmlRopeMode::kImrope) {
    if (sector % 3 == 1 && sector < 3 * sec[1]) return 1;
    if (sector % 3 == 2 && sector < 3 * sec[2]) return 2;
    if (sector % 3 == 0 && sector < 3 * sec[0]) return 0;
    return 3;
  }
  if (sector >= sec[0] && sector < sec_w) return 1;
  if (sector >= sec_w && sector < sec_w + sec[2]) return 2;
  if (sector >= sec_w + sec[2]) return 3;
  return 0;
}

void GgmlMropeCache(const GgmlRopeParams& g, const std::array<std::int64_t, 4>& pos, float* cache) {
  const KernelConstants k = ConstantsOf(g);
  const auto& sec = g.sections;
  const int sect_dims = sec[0] + sec[1] + sec[2] + sec[3];
  const int sec_w = sec[0] + sec[1];
  const int sec_e = sec[2] + sec_w;
  const bool indep_sects = g.mode == GgmlRopeMode::kVision;
  std::array<float, 4> base{};
  for (int s = 0; s < 4; ++s) base[static_cast<std::size_t>(s)] = static_cast<float>(pos[static_cast<std::size_t>(s)]);
  std::array<float, 4> theta = base;
  // ggml fills ne0/2 pairs; MROPE/IMROPE rotate the first n_dims/2 of them,
  // VISION (n_dims = ne0/2) all ne0/2 = n_dims.
  const std::int64_t end = indep_sects ? 2 * g.n_dims : g.n_dims;
  for (std::int64_t i0 = 0; i0 < end; i0 += 2) {
    const float ff = FreqFactor(g, i0 / 2);
    const int sector = static_cast<int>((i0 / 2) % sect_dims);
    if (indep_sects) {  // ggml: each section's theta restarts at its own base
      if (sector == 0) theta[0] = base[0];
      else if (sector == sec[0]) theta[1] = base[1];
      else if (sector == sec_w) theta[2] = base[2];
      else if (sector == sec_e) theta[3] = base[3];
    }
    const float t = theta[static_cast<std::size_t>(GgmlMropeStream(g, i0 / 2))];
    RopeYarn(t / ff, g, k, i0, &cache[i0], &cache[i0 + 1]);
    for (float& v : theta) v *= k.theta_scale;
  }
}

namespace {

class GgmlRotarySource : public RowSource {
 public:
  GgmlRotarySource(TableInfo info, GgmlRopeParams g, RopeLayout layout, bool cosine, std::int64_t start)
      : info_(std::move(info)), g_(std::move(g)), k_(ConstantsOf(g_)), layout_(layout), cosine_(cosine), start_(start) {}
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return true; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::int64_t half = g_.n_dims / 2;
    std::vector<float> v(static_cast<std::size_t>(half));
    for (std::int64_t r = 0; r < count; ++r) {
      CacheRow(g_, k_, start_ + first + r, cosine_ ? v.data() : nullptr, cosine_ ? nullptr : v.data());
      std::byte* row = out + static_cast<std::size_t>(r) * info_.row_bytes();
      for (std::int64_t j = 0; j < info_.cols; ++j) {
        const float x = v[static_cast<std::size_t>(layout_ == RopeLayout::kInterleaved ? j / 2 : j % half)];
        if (info_.dtype == DType::kFloat32) std::memcpy(row + 4 * j, &x, 4);
        else StoreFromDouble(row, info_.dtype, static_cast<std::size_t>(j), static_cast<double>(x));
      }
    }
  }

 private:
  TableInfo info_;
  GgmlRopeParams g_;
  KernelConstants k_;
  RopeLayout layout_;
  bool cosine_;
  std::int64_t start_;
};

}  // namespace

std::unique_ptr<RowSource> GgmlRotaryTable(TableInfo info, GgmlRopeParams g, RopeLayout layout, bool cosine,
                                           std::int64_t start) {
  // ggml converts positions to float: exact only below 2^24.
  const std::int64_t last = start + std::max<std::int64_t>(info.rows, 1) - 1;
  if (std::max(std::llabs(start), std::llabs(last)) > (std::int64_t{1} << 24))
    ThrowUsage("--max-len/--start", fmt::format("llama.cpp's recipe takes positions as float32 (exact up to 2^24 = "
                                                "16777216); positions up to {} asked",
                                                std::max(std::llabs(start), std::llabs(last))));
  return std::make_unique<GgmlRotarySource>(std::move(info), std::move(g), layout, cosine, start);
}

double GgmlAngleFactor(const GgmlRopeParams& g, std::int64_t pair) {
  const double i = static_cast<double>(pair);
  const double ln_omega0 = i * 2.0 / static_cast<double>(g.n_dims) * std::log(static_cast<double>(g.freq_base));
  // theta_scale: the exponent's rounding (|c ln b| per power), the base's
  // (|c| <= 1) and powf's 2u; i powers, plus i rounded products; 1 for the
  // second-order terms.
  double f = ln_omega0 + 4 * i + 1;
  if (!g.freq_factors.empty()) f += 1;
  if (g.freq_scale != 1.0f) f += 2;
  const double r = static_cast<double>(GgmlRampMix(g, pair));
  if (r > 0 && r < 1) {
    // The mix's roundings and r's own (3u relative): about 5u of the
    // extrapolated angle, which is θ / (freq_scale·(1 − r) + r).
    f += 5 / (static_cast<double>(g.freq_scale) * (1 - r) + r);
  }
  return f;
}

}  // namespace pe
