// Tests of core/analysis/identify/rope_fit.h (ω -> base and scaling) and of
// DetectRopeShape (identify_rope.h) on hand-derived cases: frequencies
// written from the definitions of docs/schemes.md (HF modeling_rope_utils.py
// at transformers 0044e3b3facff1a1ad60b235c69d5b45beae75a4) with round
// numbers (base 10000 and dim 8 or 16, so that ω_i = 10^(-i) or 10^(-i/2)),
// not produced by pe's generator.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/analysis/identify/identify_rope.h"
#include "core/analysis/identify/rope_fit.h"
#include "core/schemes/rope.h"

namespace pe {
namespace {

std::vector<double> Sigma(std::size_t n, double s = 1e-7) { return std::vector<double>(n, s); }

TEST(RopeFit, NoScaling) {
  // dim 8, base 10000: ω_i = 10000^(-2i/8) = 10^-i.
  const std::vector<double> w = {1, 0.1, 0.01, 0.001};
  const RopeFitResult r = FitRopeScaling(w, Sigma(4), 8);
  ASSERT_FALSE(r.candidates.empty());
  EXPECT_EQ(r.candidates[0].scaling, "none");
  EXPECT_EQ(r.candidates[0].base, 10000);
  EXPECT_NEAR(r.fitted_base, 10000, 1e-6);
  EXPECT_LE(r.candidates[0].residual, 1);
}

TEST(RopeFit, CommonBaseSnapsAndOthersStay) {
  // dim 8, base 500000: ω_i = 500000^(-i/4) (Llama 3).
  std::vector<double> w;
  for (int i = 0; i < 4; ++i) w.push_back(std::pow(500000.0, -i / 4.0));
  EXPECT_EQ(FitRopeScaling(w, Sigma(4), 8).candidates[0].base, 500000);
  // base 12345 is no common base: kept as fitted (6 digits).
  w.clear();
  for (int i = 0; i < 4; ++i) w.push_back(std::pow(12345.0, -i / 4.0));
  const RopeFitResult r = FitRopeScaling(w, Sigma(4), 8);
  EXPECT_EQ(r.candidates[0].scaling, "none");
  EXPECT_EQ(r.candidates[0].base, 12345);
}

TEST(RopeFit, Linear) {
  // linear factor 4: every ω divided by 4.
  const std::vector<double> w = {0.25, 0.025, 0.0025, 0.00025};
  const RopeFitResult r = FitRopeScaling(w, Sigma(4), 8);
  EXPECT_EQ(r.candidates[0].scaling, "linear");
  EXPECT_EQ(r.candidates[0].factor, 4);
  EXPECT_EQ(r.candidates[0].base, 10000);
  EXPECT_NEAR(r.fitted_linear_factor, 4, 1e-9);
}

TEST(RopeFit, Ntk) {
  // ntk factor 2, dim 8: base 10000·2^(8/6) in use, ω_i = that^(-i/4).
  const double b = 10000 * std::pow(2.0, 8.0 / 6.0);
  std::vector<double> w;
  for (int i = 0; i < 4; ++i) w.push_back(std::pow(b, -i / 4.0));
  const RopeFitResult r = FitRopeScaling(w, Sigma(4), 8);
  EXPECT_EQ(r.candidates[0].scaling, "ntk");
  EXPECT_EQ(r.candidates[0].factor, 2);
  EXPECT_EQ(r.candidates[0].base, 10000);
}

TEST(RopeFit, Llama3) {
  // dim 16, base 10000: ω_i = 10^(-i/2), wavelengths 2π·10^(i/2). Llama 3.1's
  // factor 8, low 1, high 4, original 8192: wavelength < 8192/4 = 2048 kept
  // (i <= 5: 1987), > 8192 divided by 8 (i = 7: 19869), between smoothed
  // (i = 6: 6283): s = (8192/6283.19 - 1)/(4 - 1), ω = (1 - s)·ω/8 + s·ω.
  std::vector<double> w;
  for (int i = 0; i < 8; ++i) w.push_back(std::pow(10.0, -i / 2.0));
  const double s = (8192 / (2 * std::numbers::pi * 1000) - 1) / 3;  // 0.10127
  w[6] = (1 - s) * w[6] / 8 + s * w[6];
  w[7] = w[7] / 8;
  const RopeFitResult r = FitRopeScaling(w, Sigma(8), 16);
  ASSERT_FALSE(r.candidates.empty());
  const RopeScalingFit& f = r.candidates[0];
  EXPECT_EQ(f.scaling, "llama3");
  EXPECT_EQ(f.factor, 8);
  EXPECT_EQ(f.low_freq_factor, 1);
  EXPECT_EQ(f.high_freq_factor, 4);
  EXPECT_EQ(f.original_max_position_embeddings, 8192);
  EXPECT_EQ(f.base, 10000);
}

TEST(RopeFit, Yarn) {
  // dim 16, base 10000, factor 4, original 4096, beta 32/1:
  // low = floor(16·ln(4096/(2π·32))/(2 ln 10000)) = floor(2.62) = 2,
  // high = ceil(16·ln(4096/(2π))/(2 ln 10000)) = ceil(5.63) = 6;
  // ramp_j = clamp((j - 2)/4, 0, 1), ω_j = ω_j/4·ramp + ω_j·(1 - ramp).
  std::vector<double> w;
  for (int j = 0; j < 8; ++j) {
    const double w0 = std::pow(10.0, -j / 2.0);
    const double ramp = std::clamp((j - 2) / 4.0, 0.0, 1.0);
    w.push_back(w0 / 4 * ramp + w0 * (1 - ramp));
  }
  const RopeFitResult r = FitRopeScaling(w, Sigma(8), 16);
  ASSERT_FALSE(r.candidates.empty());
  const RopeScalingFit& f = r.candidates[0];
  EXPECT_EQ(f.scaling, "yarn");
  EXPECT_EQ(f.factor, 4);
  // Lengths with the same floor/ceil give the same ramp: any of them is right.
  const auto range = YarnCorrectionRange(f.beta_fast, f.beta_slow, 16, f.base,
                                         static_cast<double>(f.original_max_position_embeddings), f.truncate);
  EXPECT_EQ(range.first, 2);
  EXPECT_EQ(range.second, 6);
}

TEST(RopeFit, LongropeFactorsRecovered) {
  const std::vector<double> factors = {1.0, 1.05, 1.2, 1.7, 2.5, 4.0, 9.5, 16.25};
  std::vector<double> w;
  for (int i = 0; i < 8; ++i) w.push_back(std::pow(10.0, -i / 2.0) / factors[static_cast<std::size_t>(i)]);
  const RopeFitResult r = FitRopeScaling(w, Sigma(8), 16);
  bool found = false;
  for (const auto& c : r.candidates) {
    if (c.scaling != "longrope" || c.base != 10000) continue;
    found = true;
    ASSERT_EQ(c.factors.size(), 8u);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(c.factors[i], factors[i]);
    EXPECT_LE(c.residual, 1);
  }
  EXPECT_TRUE(found);
}

TEST(RopeFit, UnresolvedPairsDoNotMislead) {
  // The two slowest pairs unmeasurable (σ = 50, values off by 3x): still none.
  std::vector<double> w = {1, 0.1, 0.01, 0.001 * 3};
  std::vector<double> s = Sigma(4);
  s[3] = 50;
  EXPECT_EQ(FitRopeScaling(w, s, 8).candidates[0].scaling, "none");
}

TEST(RopeFit, RejectsUnusableInput) {
  EXPECT_TRUE(FitRopeScaling({1, 0}, Sigma(2), 4).candidates.empty());        // ω = 0
  EXPECT_TRUE(FitRopeScaling({1, NAN}, Sigma(2), 4).candidates.empty());      // NaN
  EXPECT_TRUE(FitRopeScaling({1, 0.1}, Sigma(2), 8).candidates.empty());      // wrong count
}

TableInfo Info(std::int64_t rows, std::int64_t cols) {
  TableInfo t;
  t.rows = rows;
  t.cols = cols;
  t.dtype = DType::kFloat64;
  return t;
}

TEST(RopeShape, LayoutsKindsAndPassThrough) {
  // 3 rows, dim 4 (ω = 1, 0.01), positions 0..2.
  const double w[2] = {1, 0.01};
  std::vector<double> half_cos, inter_sin, padded, sinusoid;
  for (int p = 0; p < 3; ++p) {
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 2; ++i) half_cos.push_back(std::cos(p * w[i]));
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 2; ++k) inter_sin.push_back(std::sin(p * w[i]));
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 2; ++i) padded.push_back(std::cos(p * w[i]));
    padded.push_back(1);
    padded.push_back(1);
    for (int i = 0; i < 2; ++i) {
      sinusoid.push_back(std::sin(p * w[i]));
      sinusoid.push_back(std::cos(p * w[i]));
    }
  }
  RopeShape s = DetectRopeShape(half_cos, 3, 4, Info(3, 4));
  EXPECT_EQ(s.kind, RopeKind::kCos);
  EXPECT_EQ(s.layout, "half");
  EXPECT_EQ(s.rotary_dim, 4);
  s = DetectRopeShape(inter_sin, 3, 4, Info(3, 4));
  EXPECT_EQ(s.kind, RopeKind::kSin);
  EXPECT_EQ(s.layout, "interleaved");
  s = DetectRopeShape(padded, 3, 6, Info(3, 6));
  EXPECT_EQ(s.kind, RopeKind::kCos);
  EXPECT_EQ(s.rotary_dim, 4);
  EXPECT_EQ(s.passthrough, 2);
  EXPECT_EQ(DetectRopeShape(sinusoid, 3, 4, Info(3, 4)).kind, RopeKind::kNotRope);  // (sin, cos) pairs: a sinusoid
  // A vector: inv_freq when positive and non-increasing.
  EXPECT_EQ(DetectRopeShape({1, 0.1, 0.01}, 3, 1, Info(3, 1)).kind, RopeKind::kInvFreq);
  EXPECT_EQ(DetectRopeShape({1, 0.1, 0.2}, 3, 1, Info(3, 1)).kind, RopeKind::kNotRope);
  EXPECT_EQ(DetectRopeShape({1, -0.1, 0.01}, 3, 1, Info(3, 1)).kind, RopeKind::kNotRope);
}

}  // namespace
}  // namespace pe
