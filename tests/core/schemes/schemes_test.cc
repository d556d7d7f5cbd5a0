// The schemes beyond the plain sinusoid against independent expectations: hand-derived
// vectors from ../shared/reference/schemes.md (ALiBi slopes for 6/8/12
// heads, T5 buckets, YaRN correction ranges and attention factors, the
// llama3 29/6/29 split), MPFR for every value pe claims exact (preset
// sinusoids, RoPE cos/sin including attention-factor scaling, 2-D sin-cos,
// xPos scales), and the safetensors/multi-tensor round trip.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/schemes/registry.h"
#include "core/schemes/alibi.h"
#include "core/schemes/learned.h"
#include "core/schemes/t5_bucket.h"
#include "core/schemes/rope.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

std::vector<double> Read(RowSource& src) {
  const TableInfo& t = src.info();
  std::vector<std::byte> buf(static_cast<std::size_t>(t.rows) * t.row_bytes());
  src.ReadRows(0, t.rows, buf.data());
  std::vector<double> out(static_cast<std::size_t>(t.rows * t.cols));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = LoadAsDouble(buf.data(), t.dtype, k);
  return out;
}

SchemeSpec Spec(const char* scheme, std::int64_t d, std::int64_t len, DType dtype = DType::kFloat32) {
  SchemeSpec s;
  s.scheme = scheme;
  s.d_model = d;
  s.max_len = len;
  s.dtype = dtype;
  return s;
}

// ---- ALiBi (schemes.md §5) ----

TEST(Alibi, SlopesForEightHeadsArePowersOfTwo) {
  auto s = AlibiSlopes(8, 8);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(static_cast<double>(s[k]), std::ldexp(1.0, -(k + 1)));
}

TEST(Alibi, SlopesForTwelveHeadsInterleaveOddPowers) {
  auto s = AlibiSlopes(12, 8);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(static_cast<double>(s[k]), std::ldexp(1.0, -(k + 1)));
  const double r = std::sqrt(0.5);  // correctly rounded 2^-0.5
  const double want[4] = {r, r / 2, r / 4, r / 8};  // 0.7071, 0.3536, 0.1768, 0.0884
  for (int k = 0; k < 4; ++k) EXPECT_EQ(static_cast<double>(s[8 + k]), want[k]);
}

TEST(Alibi, SlopesForSixHeads) {
  auto s = AlibiSlopes(6, 8);
  const double want[6] = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(static_cast<double>(s[k]), want[k]);
}

TEST(Alibi, SlopesAndBiasAreCorrectlyRoundedForAnyHeadCount) {
  // n = 20: n2 = 16, slope_h = 2^(-(h+1)/2) for h < 16, then 2^(-(2m+1)/4).
  SchemeSpec spec = Spec("alibi", 0, 37);
  spec.heads = 20;
  TableSet set = MakeTableSet(spec);
  auto slopes = Read(*set.Find("slopes"));
  auto bias = Read(*set.Find("bias"));
  mpfr_t e, v;
  mpfr_inits2(256, e, v, (mpfr_ptr)nullptr);
  for (int h = 0; h < 20; ++h) {
    if (h < 16) {
      mpfr_set_si(e, -(h + 1), MPFR_RNDN);
      mpfr_div_si(e, e, 2, MPFR_RNDN);
    } else {
      mpfr_set_si(e, -(2 * (h - 16) + 1), MPFR_RNDN);
      mpfr_div_si(e, e, 4, MPFR_RNDN);
    }
    mpfr_ui_pow(v, 2, e, MPFR_RNDN);
    EXPECT_EQ(slopes[h], mpfr_get_flt(v, MPFR_RNDN)) << "head " << h;
    for (int j = 0; j < 37; j += 6) {
      mpfr_t b;
      mpfr_init2(b, 256);
      mpfr_mul_si(b, v, j, MPFR_RNDN);
      EXPECT_EQ(bias[h * 37 + j], mpfr_get_flt(b, MPFR_RNDN)) << "head " << h << " key " << j;
      mpfr_clear(b);
    }
  }
  mpfr_clears(e, v, (mpfr_ptr)nullptr);
}

TEST(Alibi, BiasFormsAndShapes) {
  SchemeSpec spec = Spec("alibi", 0, 5);
  spec.heads = 4;
  TableSet set = MakeTableSet(spec);
  ASSERT_EQ(set.tensors.size(), 2u);
  auto slopes = Read(*set.Find("slopes"));
  auto bias = Read(*set.Find("bias"));
  EXPECT_EQ(set.Find("bias")->info().rows, 4);
  for (int h = 0; h < 4; ++h)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(bias[h * 5 + j], slopes[h] * j);
  spec.alibi_bias = "distance";
  TableSet d = MakeTableSet(spec);
  auto shape = LogicalShape(d.Find("bias")->info());
  EXPECT_EQ(shape, (std::vector<std::int64_t>{4, 5, 5}));
  auto dist = Read(*d.Find("bias"));
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) EXPECT_EQ(dist[(h * 5 + i) * 5 + j], -slopes[h] * std::abs(i - j));
}

// ---- T5 buckets (schemes.md §7) ----

TEST(T5Bucket, HandVectorsBidirectional) {
  const std::pair<int, int> v[] = {{-128, 15}, {-20, 10}, {-8, 8}, {-7, 7}, {0, 0},   {1, 17},
                                   {8, 24},    {16, 26},  {32, 28}, {64, 30}, {127, 31}, {500, 31}};
  for (auto [rp, b] : v) EXPECT_EQ(T5Bucket(rp, true, 32, 128), b) << "rp " << rp;
}

TEST(T5Bucket, HandVectorsUnidirectional) {
  EXPECT_EQ(T5Bucket(-16, false, 32, 128), 16);
  EXPECT_EQ(T5Bucket(-64, false, 32, 128), 26);
  EXPECT_EQ(T5Bucket(5, false, 32, 128), 0);
  EXPECT_EQ(T5Bucket(-3, false, 32, 128), 3);
}

// ---- RoPE scalings (schemes.md §4a, §13) ----

TEST(Rope, YarnCorrectionRanges) {
  auto a = YarnCorrectionRange(32, 1, 128, 1e4, 4096, true);
  EXPECT_EQ(a, std::make_pair(20.0, 46.0));
  auto raw = YarnCorrectionRange(32, 1, 128, 1e4, 4096, false);
  EXPECT_NEAR(raw.first, 20.94, 0.005);
  EXPECT_NEAR(raw.second, 45.03, 0.005);
  EXPECT_EQ(YarnCorrectionRange(32, 1, 128, 1e6, 32768, true), std::make_pair(23.0, 40.0));
  EXPECT_EQ(YarnCorrectionRange(32, 1, 64, 1e4, 2048, true), std::make_pair(8.0, 21.0));
}

TEST(Rope, YarnDefaultAttentionFactors) {
  const double want[] = {1.069315, 1.138629, 1.207944, 1.277259};
  const double f[] = {2, 4, 8, 16};
  for (int k = 0; k < 4; ++k) {
    SchemeSpec s = Spec("rope", 128, 8);
    s.rope_scaling = "yarn";
    s.factor = f[k];
    s.max_position_embeddings = 4096;
    EXPECT_NEAR(static_cast<double>(ComputeRopeFrequencies(s).attention_factor), want[k], 5e-7);
  }
  // DeepSeek: mscale == mscale_all_dim gives exactly 1 (vLLM #48621).
  SchemeSpec s = Spec("rope", 64, 8);
  s.rope_scaling = "yarn";
  s.factor = 40;
  s.max_position_embeddings = 4096;
  s.mscale = 0.707;
  s.mscale_all_dim = 0.707;
  EXPECT_EQ(static_cast<double>(ComputeRopeFrequencies(s).attention_factor), 1.0);
}

TEST(Rope, Llama3SplitsTwentyNineSixTwentyNine) {
  SchemeSpec s = Spec("rope", 128, 8);
  s.base = 5e5;
  s.rope_scaling = "llama3";
  RopeFrequencies f = ComputeRopeFrequencies(s);
  EXPECT_EQ(std::get<std::int64_t>(*f.meta.Find("llama3_kept")), 29);
  EXPECT_EQ(std::get<std::int64_t>(*f.meta.Find("llama3_smoothed")), 6);
  EXPECT_EQ(std::get<std::int64_t>(*f.meta.Find("llama3_divided")), 29);
  // Kept frequencies are the default ones; the divided ones are /8.
  EXPECT_DOUBLE_EQ(static_cast<double>(f.inv_freq[0]), 1.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(f.inv_freq[63]), std::pow(5e5, -126.0 / 128) / 8);
}

TEST(Rope, LinearDynamicAndNtkFrequencies) {
  SchemeSpec s = Spec("rope", 64, 8);
  s.rope_scaling = "linear";
  s.factor = 4;
  auto f = ComputeRopeFrequencies(s);
  for (int i = 0; i < 32; ++i) EXPECT_DOUBLE_EQ(static_cast<double>(f.inv_freq[i]), std::pow(1e4, -2.0 * i / 64) / 4);
  s.rope_scaling = "ntk";
  f = ComputeRopeFrequencies(s);
  const double b = 1e4 * std::pow(4.0, 64.0 / 62);
  for (int i = 0; i < 32; ++i) EXPECT_NEAR(static_cast<double>(f.inv_freq[i]) / std::pow(b, -2.0 * i / 64), 1, 1e-14);
  s.rope_scaling = "dynamic";
  s.max_position_embeddings = 2048;
  s.max_len = 2048;  // within the original length: base unchanged
  f = ComputeRopeFrequencies(s);
  EXPECT_DOUBLE_EQ(static_cast<double>(f.inv_freq[5]), std::pow(1e4, -10.0 / 64));
  s.max_len = 8192;  // seq_len 8192: base' = base·(4·4 - 3)^(64/62)
  f = ComputeRopeFrequencies(s);
  const double b2 = 1e4 * std::pow(13.0, 64.0 / 62);
  EXPECT_NEAR(static_cast<double>(f.inv_freq[5]) / std::pow(b2, -10.0 / 64), 1, 1e-14);
}

TEST(Rope, LongropePicksFactorsBySequenceLength) {
  SchemeSpec s = Spec("rope", 8, 4);
  s.rope_scaling = "longrope";
  s.short_factor = "1,2,3,4";
  s.long_factor = "[5, 6, 7, 8]";
  s.max_position_embeddings = 131072;
  s.original_max_position_embeddings = 4096;
  auto f = ComputeRopeFrequencies(s);
  EXPECT_DOUBLE_EQ(static_cast<double>(f.inv_freq[2]), std::pow(1e4, -4.0 / 8) / 3);
  EXPECT_NEAR(static_cast<double>(f.attention_factor), std::sqrt(1 + std::log(32.0) / std::log(4096.0)), 1e-15);
  s.seq_len = 5000;
  f = ComputeRopeFrequencies(s);
  EXPECT_DOUBLE_EQ(static_cast<double>(f.inv_freq[2]), std::pow(1e4, -4.0 / 8) / 7);
}

// cos/sin(p·ω)·af correctly rounded to float, by MPFR.
float MpfrScaledTrig(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine, double af,
                     double divisor = 1) {
  mpfr_t e, b, w, t;
  mpfr_inits2(256, e, b, w, t, (mpfr_ptr)nullptr);
  mpfr_set_si(e, -num, MPFR_RNDN);
  mpfr_div_si(e, e, den, MPFR_RNDN);
  mpfr_set_d(b, base, MPFR_RNDN);
  mpfr_pow(w, b, e, MPFR_RNDN);
  mpfr_div_d(w, w, divisor, MPFR_RNDN);
  mpfr_mul_si(t, w, pos, MPFR_RNDN);
  if (cosine) mpfr_cos(t, t, MPFR_RNDN);
  else mpfr_sin(t, t, MPFR_RNDN);
  mpfr_mul_d(t, t, af, MPFR_RNDN);
  const float f = mpfr_get_flt(t, MPFR_RNDN);
  mpfr_clears(e, b, w, t, (mpfr_ptr)nullptr);
  return f;
}

TEST(Rope, HalfAndInterleavedLayoutsAreExact) {
  for (const char* layout : {"half", "interleaved"}) {
    SchemeSpec s = Spec("rope", 16, 50);
    s.start = 4000;
    s.layout = layout;
    TableSet set = MakeTableSet(s);
    auto cos = Read(*set.Find("cos"));
    auto sin = Read(*set.Find("sin"));
    const bool half = std::string(layout) == "half";
    for (int r = 0; r < 50; ++r)
      for (int j = 0; j < 16; ++j) {
        const int i = half ? j % 8 : j / 2;
        EXPECT_EQ(cos[r * 16 + j], oracle::SinusoidF32(4000 + r, 1e4, 2 * i, 16, true)) << layout << r << "," << j;
        EXPECT_EQ(sin[r * 16 + j], oracle::SinusoidF32(4000 + r, 1e4, 2 * i, 16, false));
      }
  }
}

TEST(Rope, PartialRotaryNarrowsTheTables) {
  SchemeSpec s = Spec("rope", 64, 3);
  s.partial_rotary_factor = 0.25;  // GPT-NeoX rotary_pct
  TableSet set = MakeTableSet(s);
  EXPECT_EQ(set.Find("cos")->info().cols, 16);
  EXPECT_EQ(set.Find("inv_freq")->info().rows, 8);
  auto inv = Read(*set.Find("inv_freq"));
  EXPECT_EQ(inv[1], static_cast<double>(static_cast<float>(std::pow(1e4, -2.0 / 16))));
}

TEST(Rope, LinearScaledAttentionFactorIsRoundedOnce) {
  // linear factor 2 with --attention-factor 1.25: cos(p·ω/2)·1.25, one rounding.
  SchemeSpec s = Spec("rope", 8, 40);
  s.start = 1000;
  s.rope_scaling = "linear";
  s.factor = 2;
  s.attention_factor = 1.25;
  TableSet set = MakeTableSet(s);
  auto cos = Read(*set.Find("cos"));
  for (int r = 0; r < 40; ++r)
    for (int j = 0; j < 8; ++j)
      EXPECT_EQ(cos[r * 8 + j], MpfrScaledTrig(1000 + r, 1e4, 2 * (j % 4), 8, true, 1.25, 2.0));
}

// MPFR's value of the same, rounded to `bits` significant bits (8: bfloat16).
double MpfrScaledTrigBits(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine, double af,
                          double divisor, int bits) {
  mpfr_t e, b, w, t, r;
  mpfr_inits2(256, e, b, w, t, (mpfr_ptr)nullptr);
  mpfr_init2(r, bits);
  mpfr_set_si(e, -num, MPFR_RNDN);
  mpfr_div_si(e, e, den, MPFR_RNDN);
  mpfr_set_d(b, base, MPFR_RNDN);
  mpfr_pow(w, b, e, MPFR_RNDN);
  mpfr_div_d(w, w, divisor, MPFR_RNDN);
  mpfr_mul_si(t, w, pos, MPFR_RNDN);
  if (cosine) mpfr_cos(t, t, MPFR_RNDN);
  else mpfr_sin(t, t, MPFR_RNDN);
  mpfr_mul_d(t, t, af, MPFR_RNDN);
  mpfr_set(r, t, MPFR_RNDN);
  const double out = mpfr_get_d(r, MPFR_RNDN);
  mpfr_clears(e, b, w, t, r, (mpfr_ptr)nullptr);
  return out;
}

TEST(Rope, ScaledTablesAreCorrectlyRoundedAtLargePositions) {
  // The fast double path with its error bound, and the quad fallback, must
  // give the correctly rounded af·cos/sin for float32 and bfloat16 anywhere.
  std::mt19937_64 rng(11);
  const double af = 1.0693147180559945;  // yarn's 0.1·ln 2 + 1, as a double
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    for (int trial = 0; trial < 40; ++trial) {
      SchemeSpec s = Spec("rope", 16, 25, dtype);
      s.start = static_cast<std::int64_t>(rng() % (std::uint64_t{1} << 40)) - 25;
      s.rope_scaling = "linear";
      s.factor = 3;
      s.attention_factor = af;
      TableSet set = MakeTableSet(s);
      auto cos = Read(*set.Find("cos"));
      auto sin = Read(*set.Find("sin"));
      for (int r = 0; r < 25; ++r)
        for (int j = 0; j < 8; ++j) {
          const int bits = dtype == DType::kFloat32 ? 24 : 8;
          ASSERT_EQ(cos[r * 16 + j], MpfrScaledTrigBits(s.start + r, 1e4, 2 * j, 16, true, af, 3.0, bits))
              << "pos " << s.start + r << " col " << j;
          ASSERT_EQ(sin[r * 16 + j], MpfrScaledTrigBits(s.start + r, 1e4, 2 * j, 16, false, af, 3.0, bits));
        }
    }
  }
}

// ---- sinusoid presets against MPFR ----

TEST(Presets, FairseqConcatHalfMinusOneZeroRowAndColumn) {
  SchemeSpec s = Spec("fairseq", 9, 6);  // odd d: zero column appended
  auto v = Read(*MakeGenerator(s));
  const int h = 4;
  for (int p = 0; p < 6; ++p)
    for (int j = 0; j < 9; ++j) {
      double want = 0;
      if (p != 1 && j < 2 * h) want = oracle::SinusoidF32(p, 1e4, j % h, h - 1, j >= h);
      EXPECT_EQ(v[p * 9 + j], want) << p << "," << j;
    }
}

TEST(Presets, Tensor2TensorMatchesExpFormAndStartIndex) {
  SchemeSpec s = Spec("tensor2tensor", 8, 4);
  s.start = 7;
  auto v = Read(*MakeGenerator(s));
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 8; ++j) EXPECT_EQ(v[r * 8 + j], oracle::SinusoidF32(7 + r, 1e4, j % 4, 3, j >= 4));
  // min_timescale 2, max 2e4: ω_k = 2·exp(-k ln(1e4)/3) = 2·1e4^(-k/3).
  s.min_timescale = 2;
  s.max_timescale = 2e4;
  auto w = Read(*MakeGenerator(s));
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(w[r * 8 + k], MpfrScaledTrig(7 + r, 1e4, k, 3, false, 1.0, 0.5));
}

TEST(Presets, MarianOddDimensionEndsSinBlockUnpaired) {
  SchemeSpec s = Spec("marian", 7, 5);
  auto v = Read(*MakeGenerator(s));
  for (int p = 0; p < 5; ++p) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(v[p * 7 + i], oracle::SinusoidF32(p, 1e4, 2 * i, 7, false));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(v[p * 7 + 4 + i], oracle::SinusoidF32(p, 1e4, 2 * i, 7, true));
  }
}

TEST(Presets, SinOnlyHasNoCos) {
  auto v = Read(*MakeGenerator(Spec("sin-only", 4, 3)));
  for (int p = 0; p < 3; ++p)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(v[p * 4 + j], oracle::SinusoidF32(p, 1e4, 2 * (j / 2), 4, false));
}

TEST(Presets, SinusoidalLayoutAndDenominatorFlags) {
  SchemeSpec s = Spec("sinusoidal", 6, 3);
  s.layout = "concat";
  s.denominator = "half-minus-one";
  auto v = Read(*MakeGenerator(s));
  for (int p = 0; p < 3; ++p)
    for (int j = 0; j < 6; ++j) EXPECT_EQ(v[p * 6 + j], oracle::SinusoidF32(p, 1e4, j % 3, 2, j >= 3));
  s.layout = "diagonal";
  EXPECT_THROW(MakeGenerator(s), Error);
}

// ---- sincos-2d ----

TEST(SinCos2d, MaeAndTimmLayoutsOnANonSquareGrid) {
  for (const char* layout : {"mae", "timm"}) {
    SchemeSpec s = Spec("sincos-2d", 8, 0);
    s.grid_h = 3;
    s.grid_w = 5;
    s.cls_token = true;
    s.layout = layout;
    auto v = Read(*MakeGenerator(s));
    ASSERT_EQ(v.size(), 16u * 8);
    for (int j = 0; j < 8; ++j) EXPECT_EQ(v[j], 0.0);
    for (int t = 0; t < 15; ++t) {
      const int x = t % 5, y = t / 5;
      const double* row = &v[(t + 1) * 8];
      for (int k = 0; k < 2; ++k) {
        const float sx = oracle::SinusoidF32(x, 1e4, k, 2, false), cx = oracle::SinusoidF32(x, 1e4, k, 2, true);
        const float sy = oracle::SinusoidF32(y, 1e4, k, 2, false), cy = oracle::SinusoidF32(y, 1e4, k, 2, true);
        if (std::string(layout) == "mae") {
          EXPECT_EQ(row[k], sx);
          EXPECT_EQ(row[2 + k], cx);
          EXPECT_EQ(row[4 + k], sy);
          EXPECT_EQ(row[6 + k], cy);
        } else {
          EXPECT_EQ(row[k], sy);
          EXPECT_EQ(row[2 + k], sx);
          EXPECT_EQ(row[4 + k], cy);
          EXPECT_EQ(row[6 + k], cx);
        }
      }
    }
  }
}

// ---- xPos ----

TEST(Xpos, ScaleIsZetaToTheCentredPositionOver512) {
  SchemeSpec s = Spec("xpos", 8, 5);
  TableSet set = MakeTableSet(s);
  auto scale = Read(*set.Find("scale"));
  // L = 5: min_pos = floor(-5/2) = -3, rows n = -3..1.
  mpfr_t z, e;
  mpfr_inits2(256, z, e, (mpfr_ptr)nullptr);
  for (int r = 0; r < 5; ++r)
    for (int k = 0; k < 4; ++k) {
      mpfr_set_si(z, 2 * k, MPFR_RNDN);
      mpfr_set_d(e, 0.4 * 8, MPFR_RNDN);  // 3.2 is not exact in binary: build (2k + 0.4D)/(1.4D) exactly
      mpfr_set_si(z, 20 * k + 32, MPFR_RNDN);
      mpfr_div_si(z, z, 112, MPFR_RNDN);
      mpfr_set_si(e, -3 + r, MPFR_RNDN);
      mpfr_div_si(e, e, 512, MPFR_RNDN);
      mpfr_pow(z, z, e, MPFR_RNDN);
      EXPECT_EQ(scale[r * 4 + k], mpfr_get_flt(z, MPFR_RNDN));
    }
  mpfr_clears(z, e, (mpfr_ptr)nullptr);
}

// ---- learned ----

TEST(Learned, SplitMix64ReferenceVectors) {
  // SplitMix64 seeded with 0 first emits 0xE220A8397B1DCDAF (Vigna's generator).
  EXPECT_EQ(SplitMix64At(0, 0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(SplitMix64At(1234567, 0), 6457827717110365317ull);
  EXPECT_EQ(SplitMix64At(1234567, 1), 3203168211198807973ull);
}

TEST(Learned, BoxMullerValuesAreCorrectlyRounded) {
  // The documented generator evaluated by MPFR at 256 bits: σ·sqrt(-2 ln u1)·cos/sin(2π u2).
  SchemeSpec s = Spec("learned", 5, 4);
  s.seed = 99;
  s.sigma = 0.02;
  auto v = Read(*MakeGenerator(s));
  mpfr_t u1, u2, r, t, sig;
  mpfr_inits2(256, u1, u2, r, t, sig, (mpfr_ptr)nullptr);
  mpfr_set_d(sig, 0.02, MPFR_RNDN);
  for (std::uint64_t k = 0; k < 20; ++k) {
    const std::uint64_t m = k / 2;
    mpfr_set_d(u1, static_cast<double>((SplitMix64At(99, 2 * m) >> 11) + 1), MPFR_RNDN);  // < 2^53: exact
    mpfr_div_2ui(u1, u1, 53, MPFR_RNDN);
    mpfr_set_d(u2, static_cast<double>(SplitMix64At(99, 2 * m + 1) >> 11), MPFR_RNDN);
    mpfr_div_2ui(u2, u2, 53, MPFR_RNDN);
    mpfr_log(r, u1, MPFR_RNDN);
    mpfr_mul_si(r, r, -2, MPFR_RNDN);
    mpfr_sqrt(r, r, MPFR_RNDN);
    mpfr_const_pi(t, MPFR_RNDN);
    mpfr_mul(t, t, u2, MPFR_RNDN);
    mpfr_mul_2ui(t, t, 1, MPFR_RNDN);
    if (k % 2 == 0) mpfr_cos(t, t, MPFR_RNDN);
    else mpfr_sin(t, t, MPFR_RNDN);
    mpfr_mul(t, t, r, MPFR_RNDN);
    mpfr_mul(t, t, sig, MPFR_RNDN);
    EXPECT_EQ(v[k], mpfr_get_flt(t, MPFR_RNDN)) << "element " << k;
  }
  mpfr_clears(u1, u2, r, t, sig, (mpfr_ptr)nullptr);
}

TEST(Learned, ReproducibleAndNormal) {
  SchemeSpec s = Spec("learned", 64, 2000);
  s.seed = 42;
  auto a = Read(*MakeGenerator(s));
  auto b = Read(*MakeGenerator(s));
  EXPECT_EQ(a, b);
  double mean = 0, var = 0;
  for (double x : a) mean += x;
  mean /= a.size();
  for (double x : a) var += (x - mean) * (x - mean);
  var /= a.size();
  EXPECT_NEAR(mean, 0, 0.02 * 5 / std::sqrt(a.size()));
  EXPECT_NEAR(std::sqrt(var), 0.02, 0.0003);
  // Row p is the same whatever the start of the table.
  s.start = 10;
  s.max_len = 3;
  auto c = Read(*MakeGenerator(s));
  for (int k = 0; k < 3 * 64; ++k) EXPECT_EQ(c[k], a[10 * 64 + k]);
}

// ---- multi-tensor formats ----

std::string Scratch(const char* name) { return ::testing::TempDir() + "/pe_schemes_" + name; }

TEST(Formats, SafetensorsRoundTripsEveryRopeTensor) {
  SchemeSpec s = Spec("rope", 16, 10, DType::kBFloat16);
  s.rope_scaling = "yarn";
  s.factor = 4;
  s.max_position_embeddings = 64;
  TableSet set = MakeTableSet(s);
  const std::string path = Scratch("rope.safetensors");
  WriteTables(set, Format::kSafetensors, path);
  TableSet fresh = MakeTableSet(s);
  for (const char* name : {"cos", "sin", "inv_freq"}) {
    OpenOptions o;
    o.dataset = name;
    auto back = OpenTable(path, o);
    EXPECT_EQ(back->info().dtype, DType::kBFloat16);
    EXPECT_EQ(Read(*back), Read(*fresh.Find(name))) << name;
    const MetaValue* rs = back->info().meta.Find("rope_scaling");
    ASSERT_NE(rs, nullptr);
    EXPECT_EQ(std::get<std::string>(*rs), "yarn");
  }
  EXPECT_THROW(OpenTable(path), Error);  // several tensors: must choose
  std::remove(path.c_str());
}

TEST(Formats, JsonAndHdf5HoldSeveralTensors) {
  SchemeSpec s = Spec("alibi", 0, 4);
  s.heads = 3;
  s.alibi_bias = "distance";
  for (Format f : {Format::kJson, Format::kHdf5}) {
    TableSet set = MakeTableSet(s);
    const std::string path = Scratch(f == Format::kJson ? "alibi.json" : "alibi.h5");
    WriteTables(set, f, path);
    OpenOptions o;
    o.dataset = "slopes";
    auto slopes = OpenTable(path, o);
    EXPECT_EQ(Read(*slopes), (std::vector<double>{0.0625, 0.00390625, 0.25}));
    if (f == Format::kJson) {
      o.dataset = "bias";
      auto bias = OpenTable(path, o);
      EXPECT_EQ(LogicalShape(bias->info()), (std::vector<std::int64_t>{3, 4, 4}));
      EXPECT_EQ(Read(*bias)[1 * 16 + 0 * 4 + 3], -0.00390625 * 3);
    }
    std::remove(path.c_str());
  }
}

TEST(Formats, OneTensorFormatsRefuseASetWithoutTensor) {
  SchemeSpec s = Spec("rope", 8, 2);
  TableSet set = MakeTableSet(s);
  try {
    WriteTables(set, Format::kNpy, Scratch("x.npy"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--tensor"), std::string::npos);
  }
  s.tensor = "sin";
  TableSet one = MakeTableSet(s);
  ASSERT_EQ(one.tensors.size(), 1u);
  EXPECT_EQ(one.tensors[0]->info().name, "sin");
}

TEST(Formats, SafetensorsRejectsAHeaderPastTheEnd) {
  const std::string path = Scratch("bad.safetensors");
  {
    std::ofstream f(path, std::ios::binary);
    const unsigned char len[8] = {0xff, 0xff, 0, 0, 0, 0, 0, 0};
    f.write(reinterpret_cast<const char*>(len), 8);
    f << "{}";
  }
  EXPECT_THROW(OpenTable(path), Error);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pe
