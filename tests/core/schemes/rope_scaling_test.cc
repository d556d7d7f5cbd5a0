// RoPE scaling rules (core/schemes/rope_scaling.h) against independent
// expectations:
//  - golden vectors transcribed from huggingface/transformers
//    tests/utils/test_modeling_rope_utils.py @087e800256786f75d7392f947c17dfb5fac2dc3b
//    (EXPECTED_INV_FREQ for default, dynamic, yarn, llama3 and the explicit
//    attention-factor checks), reproduced by pe's float32-rounded inv_freq;
//  - MPFR (tests/oracle) for tables whose frequencies are exact powers
//    (proportional, vLLM fixed NTK, NTK-alpha, vLLM dynamic, rope_ratio),
//    chosen with bases 2, 3 and 10 so that each frequency is b^(-num/den);
//  - hand-derived values for the rules' switch points and refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/schemes/registry.h"
#include "core/schemes/rope.h"
#include "core/schemes/rope_scaling.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

SchemeSpec Llama(const char* type) {
  // LlamaConfig() defaults: hidden 4096 / 32 heads = head_dim 128, rope_theta 1e4,
  // max_position_embeddings 2048.
  SchemeSpec s;
  s.scheme = "rope";
  s.d_model = 128;
  s.max_len = 8;
  s.rope_scaling = type;
  s.max_position_embeddings = 2048;
  return s;
}

std::vector<double> Read(RowSource& src) {
  const TableInfo& t = src.info();
  std::vector<std::byte> buf(static_cast<std::size_t>(t.rows) * t.row_bytes());
  src.ReadRows(0, t.rows, buf.data());
  std::vector<double> out(static_cast<std::size_t>(t.rows * t.cols));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = LoadAsDouble(buf.data(), t.dtype, k);
  return out;
}

// The snapshot prints 5 significant digits ("8.0931e-01"): it is the float32
// value rounded to them, so pe's float32 inv_freq lies within half a unit of
// the last printed digit, plus HF's own float32 recipe error (pow and a
// division in float32: a few ulp, below 2^-20 relative).
void ExpectSnapshot(const RopeFrequencies& f, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(f.inv_freq.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double got = static_cast<float>(static_cast<double>(f.inv_freq[i]));
    const double unit = std::pow(10.0, std::floor(std::log10(std::fabs(want[i]))) - 4);
    EXPECT_LE(std::fabs(got - want[i]), 0.5 * unit * 1.001 + std::fabs(want[i]) * 0x1p-20) << what << " i=" << i;
  }
}

const std::vector<double> kDefault = {
    1.0000e+00, 8.6596e-01, 7.4989e-01, 6.4938e-01, 5.6234e-01, 4.8697e-01, 4.2170e-01, 3.6517e-01, 3.1623e-01,
    2.7384e-01, 2.3714e-01, 2.0535e-01, 1.7783e-01, 1.5399e-01, 1.3335e-01, 1.1548e-01, 1.0000e-01, 8.6596e-02,
    7.4989e-02, 6.4938e-02, 5.6234e-02, 4.8697e-02, 4.2170e-02, 3.6517e-02, 3.1623e-02, 2.7384e-02, 2.3714e-02,
    2.0535e-02, 1.7783e-02, 1.5399e-02, 1.3335e-02, 1.1548e-02, 1.0000e-02, 8.6596e-03, 7.4989e-03, 6.4938e-03,
    5.6234e-03, 4.8697e-03, 4.2170e-03, 3.6517e-03, 3.1623e-03, 2.7384e-03, 2.3714e-03, 2.0535e-03, 1.7783e-03,
    1.5399e-03, 1.3335e-03, 1.1548e-03, 1.0000e-03, 8.6596e-04, 7.4989e-04, 6.4938e-04, 5.6234e-04, 4.8697e-04,
    4.2170e-04, 3.6517e-04, 3.1623e-04, 2.7384e-04, 2.3714e-04, 2.0535e-04, 1.7783e-04, 1.5399e-04, 1.3335e-04,
    1.1548e-04};
const std::vector<double> kDynamic = {
    1.0000e+00, 8.0931e-01, 6.5498e-01, 5.3008e-01, 4.2900e-01, 3.4720e-01, 2.8099e-01, 2.2741e-01, 1.8404e-01,
    1.4895e-01, 1.2055e-01, 9.7558e-02, 7.8955e-02, 6.3899e-02, 5.1714e-02, 4.1853e-02, 3.3872e-02, 2.7413e-02,
    2.2185e-02, 1.7955e-02, 1.4531e-02, 1.1760e-02, 9.5176e-03, 7.7027e-03, 6.2339e-03, 5.0451e-03, 4.0831e-03,
    3.3045e-03, 2.6744e-03, 2.1644e-03, 1.7517e-03, 1.4176e-03, 1.1473e-03, 9.2852e-04, 7.5146e-04, 6.0817e-04,
    4.9220e-04, 3.9834e-04, 3.2238e-04, 2.6091e-04, 2.1115e-04, 1.7089e-04, 1.3830e-04, 1.1193e-04, 9.0585e-05,
    7.3312e-05, 5.9332e-05, 4.8018e-05, 3.8861e-05, 3.1451e-05, 2.5453e-05, 2.0600e-05, 1.6672e-05, 1.3492e-05,
    1.0920e-05, 8.8374e-06, 7.1522e-06, 5.7883e-06, 4.6845e-06, 3.7912e-06, 3.0683e-06, 2.4832e-06, 2.0097e-06,
    1.6265e-06};
const std::vector<double> kYarn = {
    1.0000e+00, 8.6596e-01, 7.4989e-01, 6.4938e-01, 5.6234e-01, 4.8697e-01, 4.2170e-01, 3.6517e-01, 3.1623e-01,
    2.7384e-01, 2.3714e-01, 2.0535e-01, 1.7783e-01, 1.5399e-01, 1.3335e-01, 1.1548e-01, 1.0000e-01, 8.3479e-02,
    6.9590e-02, 5.7925e-02, 4.8136e-02, 3.9931e-02, 3.3061e-02, 2.7315e-02, 2.2515e-02, 1.8512e-02, 1.5177e-02,
    1.2403e-02, 1.0101e-02, 8.1924e-03, 6.6143e-03, 5.3120e-03, 4.2400e-03, 3.3599e-03, 2.6396e-03, 2.0520e-03,
    1.5746e-03, 1.1882e-03, 8.7713e-04, 6.2810e-04, 4.3007e-04, 2.7384e-04, 2.3714e-04, 2.0535e-04, 1.7783e-04,
    1.5399e-04, 1.3335e-04, 1.1548e-04, 1.0000e-04, 8.6596e-05, 7.4989e-05, 6.4938e-05, 5.6234e-05, 4.8697e-05,
    4.2170e-05, 3.6517e-05, 3.1623e-05, 2.7384e-05, 2.3714e-05, 2.0535e-05, 1.7783e-05, 1.5399e-05, 1.3335e-05,
    1.1548e-05};
const std::vector<double> kLlama3 = {
    1.0000e+00, 8.6596e-01, 7.4989e-01, 6.4938e-01, 5.6234e-01, 4.8697e-01, 4.2170e-01, 3.6517e-01, 3.1623e-01,
    2.7384e-01, 2.3714e-01, 2.0535e-01, 1.7783e-01, 1.5399e-01, 1.3335e-01, 1.1548e-01, 1.0000e-01, 8.6596e-02,
    7.4989e-02, 6.4938e-02, 5.6234e-02, 4.8697e-02, 4.2170e-02, 3.6517e-02, 3.1623e-02, 2.7384e-02, 2.3714e-02,
    2.0535e-02, 1.7783e-02, 1.5399e-02, 1.3335e-02, 1.0730e-02, 7.7785e-03, 5.6009e-03, 3.9991e-03, 2.8248e-03,
    1.9675e-03, 1.3449e-03, 8.9549e-04, 5.7363e-04, 3.4539e-04, 2.7384e-04, 2.3714e-04, 2.0535e-04, 1.7783e-04,
    1.5399e-04, 1.3335e-04, 1.1548e-04, 1.0000e-04, 8.6596e-05, 7.4989e-05, 6.4938e-05, 5.6234e-05, 4.8697e-05,
    4.2170e-05, 3.6517e-05, 3.1623e-05, 2.7384e-05, 2.3714e-05, 2.0535e-05, 1.7783e-05, 1.5399e-05, 1.3335e-05,
    1.1548e-05};

TEST(RopeGolden, DefaultSnapshot) { ExpectSnapshot(ComputeRopeFrequencies(Llama("none")), kDefault, "default"); }

TEST(RopeGolden, DynamicSnapshotAndReset) {
  SchemeSpec s = Llama("dynamic");
  s.factor = 10;
  s.seq_len = 16384;
  ExpectSnapshot(ComputeRopeFrequencies(s), kDynamic, "dynamic seq_len 16384");
  // Check 1: below max_position_embeddings (seq_len 1, or none) it is the default table.
  for (double f : {2.0, 10.0, 20.0}) {
    s.factor = f;
    s.seq_len = 1;
    auto r = ComputeRopeFrequencies(s);
    EXPECT_EQ(static_cast<double>(r.attention_factor), 1.0);
    ExpectSnapshot(r, kDefault, "dynamic seq_len 1");
  }
}

TEST(RopeGolden, YarnSnapshotAndAttentionFactors) {
  SchemeSpec s = Llama("yarn");
  s.factor = 10;
  ExpectSnapshot(ComputeRopeFrequencies(s), kYarn, "yarn factor 10");
  for (double f : {2.0, 10.0, 20.0}) {
    s.factor = f;
    s.attention_factor = -1;
    EXPECT_NEAR(static_cast<double>(ComputeRopeFrequencies(s).attention_factor), 0.1 * std::log(f) + 1.0, 1e-15);
    s.attention_factor = 0.5;
    EXPECT_EQ(static_cast<double>(ComputeRopeFrequencies(s).attention_factor), 0.5);
  }
  // beta_fast 1000: every frequency but the first interpolates; the last 20 are default/factor.
  s.attention_factor = -1;
  s.factor = 10;
  s.beta_fast = 1000;
  auto r = ComputeRopeFrequencies(s);
  auto d = ComputeRopeFrequencies(Llama("none"));
  EXPECT_EQ(r.inv_freq[0], d.inv_freq[0]);
  for (int i = 44; i < 64; ++i) EXPECT_EQ(r.inv_freq[i], d.inv_freq[i] / 10) << i;
}

TEST(RopeGolden, Llama3Snapshot) {
  SchemeSpec s = Llama("llama3");
  s.factor = 10;
  s.original_max_position_embeddings = 2048;
  auto r = ComputeRopeFrequencies(s);
  EXPECT_EQ(static_cast<double>(r.attention_factor), 1.0);
  ExpectSnapshot(r, kLlama3, "llama3 factor 10");
}

TEST(RopeGolden, LongropeAttentionFactors) {
  SchemeSpec s = Llama("longrope");
  std::string sh, lo;
  for (int i = 0; i < 64; ++i) {
    sh += (i ? "," : "") + std::string("2");
    lo += (i ? "," : "") + std::to_string(i + 1);
  }
  s.short_factor = sh;
  s.long_factor = lo;
  for (double f : {2.0, 10.0, 20.0}) {
    s.factor = f;
    s.attention_factor = -1;
    EXPECT_NEAR(static_cast<double>(ComputeRopeFrequencies(s).attention_factor),
                std::sqrt(1 + std::log(f) / std::log(2048.0)), 1e-15);
    s.attention_factor = 0.5;
    EXPECT_EQ(static_cast<double>(ComputeRopeFrequencies(s).attention_factor), 0.5);
  }
}

// ---- the semantics where peers disagree ----

TEST(RopeSemantics, YarnFactorRuleHfVersus445) {
  SchemeSpec s = Llama("yarn");
  s.factor = 4;
  s.max_position_embeddings = 131072;
  s.original_max_position_embeddings = 4096;  // implicit factor 32
  auto hf = ComputeRopeFrequencies(s);
  EXPECT_EQ(hf.meta.Find("effective_factor") ? MetaToString(*hf.meta.Find("effective_factor")) : "", "4");
  EXPECT_EQ(MetaToString(*hf.meta.Find("yarn_implicit_factor")), "32");
  EXPECT_NEAR(static_cast<double>(hf.attention_factor), 0.1 * std::log(4.0) + 1, 1e-15);
  s.semantics = "hf-4.45";
  auto old = ComputeRopeFrequencies(s);
  EXPECT_EQ(MetaToString(*old.meta.Find("effective_factor")), "32");
  EXPECT_NEAR(static_cast<double>(old.attention_factor), 0.1 * std::log(32.0) + 1, 1e-15);
  // Equal implicit factor: no warning key.
  s.semantics = "hf";
  s.factor = 32;
  EXPECT_EQ(ComputeRopeFrequencies(s).meta.Find("yarn_implicit_factor"), nullptr);
}

TEST(RopeSemantics, DeepseekSoftmaxScale) {
  SchemeSpec s = Llama("yarn");
  s.d_model = 64;
  s.factor = 40;
  s.max_position_embeddings = 163840;
  s.original_max_position_embeddings = 4096;
  s.mscale = 1;
  s.mscale_all_dim = 1;
  auto r = ComputeRopeFrequencies(s);
  EXPECT_EQ(static_cast<double>(r.attention_factor), 1.0);
  const double m = 0.1 * std::log(40.0) + 1;
  EXPECT_NEAR(std::stod(MetaToString(*r.meta.Find("softmax_scale_multiplier"))), m * m, 1e-14);
  EXPECT_EQ(MetaToString(*r.meta.Find("logit_scale")), "1");
}

TEST(RopeSemantics, LlamaCppCorrDimsInFloat32) {
  // Hand-derived: d=128, n_ctx_orig 4096, base 1e4: corr(32) = 20.94, corr(1) = 45.73 -> [20, 46].
  auto [lo, hi] = GgmlYarnCorrDims(128, 4096, 1e4f, 32, 1);
  EXPECT_EQ(lo, 20.0f);
  EXPECT_EQ(hi, 46.0f);
  SchemeSpec s = Llama("yarn");
  s.factor = 4;
  s.original_max_position_embeddings = 4096;
  s.semantics = "llama.cpp";
  s.attn_factor = 0.5;  // llama.cpp's attn_factor multiplies
  auto r = ComputeRopeFrequencies(s);
  EXPECT_NEAR(static_cast<double>(r.attention_factor), 0.5 * (1 + 0.1 * std::log(4.0)), 1e-16);
  s.attention_factor = 0.75;  // the override wins, as with every rule
  EXPECT_EQ(static_cast<double>(ComputeRopeFrequencies(s).attention_factor), 0.75);
  s.attention_factor = -1;
  s.truncate = false;  // ggml always floors/ceils: refused, not ignored
  EXPECT_THROW(ComputeRopeFrequencies(s), Error);
}

// ---- MPFR: frequencies that are exact powers b^(-num/den) ----

// cos/sin of the float32 table equal the oracle's correctly rounded values:
// column j (half layout) uses frequency i(j) = j mod (cols/2) = b^(-num(i)/den).
template <typename Num>
void ExpectOracle(const SchemeSpec& s, double b, Num num, std::int64_t den, const char* what) {
  TableSet set = MakeTableSet(s);
  auto cos = Read(*set.Find("cos"));
  auto sin = Read(*set.Find("sin"));
  const std::int64_t cols = set.Find("cos")->info().cols, half = cols / 2;
  for (std::int64_t r = 0; r < s.max_len; ++r)
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t i = j % half;
      const std::int64_t p = s.start + r;
      double wc, ws;
      if (num(i) < 0) {  // a zero frequency
        wc = 1;
        ws = 0;
      } else {
        wc = oracle::SinusoidF32(p, b, num(i), den, true);
        ws = oracle::SinusoidF32(p, b, num(i), den, false);
      }
      ASSERT_EQ(cos[r * cols + j], wc) << what << " r=" << r << " j=" << j;
      ASSERT_EQ(sin[r * cols + j], ws) << what << " r=" << r << " j=" << j;
    }
}

TEST(RopeOracle, ProportionalZeroFrequencies) {
  // head 32, partial 0.25: rope_angles 4 = 10^(-2i/32), then 12 zeros per half.
  SchemeSpec s = Llama("proportional");
  s.d_model = 32;
  s.base = 10;
  s.partial_rotary_factor = 0.25;
  s.max_len = 40;
  s.start = 1000;
  s.max_position_embeddings = -1;
  auto f = ComputeRopeFrequencies(s);
  EXPECT_EQ(f.dim, 32);
  EXPECT_EQ(MetaToString(*f.meta.Find("nope_angles")), "12");
  ExpectOracle(s, 10, [](std::int64_t i) { return i < 4 ? 2 * i : std::int64_t{-1}; }, 32, "proportional");
}

TEST(RopeOracle, VllmFixedNtk) {
  // base 2^16, factor 4: (2^18)^(-2i/d) / 4^(2/d) = 2^(-(36i+4)/d).
  SchemeSpec s = Llama("ntk");
  s.d_model = 16;
  s.base = 65536;
  s.factor = 4;
  s.semantics = "vllm";
  s.max_len = 30;
  s.start = 7;
  ExpectOracle(s, 2, [](std::int64_t i) { return 36 * i + 4; }, 16, "vllm ntk");
}

TEST(RopeOracle, NtkAlpha) {
  // base 2^16, alpha 2, d 16: 2^(-2i(17d-32)/(d(d-2))) = 2^(-2i·240/224).
  SchemeSpec s = Llama("dynamic");
  s.d_model = 16;
  s.base = 65536;
  s.alpha = 2;
  s.max_len = 30;
  ExpectOracle(s, 2, [](std::int64_t i) { return 2 * i * 240; }, 224, "alpha");
}

TEST(RopeOracle, VllmStaticDynamic) {
  // base 3^8, factor 2: base·(4-2+1)^(d/(d-2)) = 3^(8 + d/(d-2)); d 16:
  // inv_i = 3^(-2i(8·14+16)/(16·14)) = 3^(-2i·128/224).
  SchemeSpec s = Llama("dynamic");
  s.d_model = 16;
  s.base = 6561;
  s.factor = 2;
  s.semantics = "vllm@2026-05";
  s.max_len = 30;
  ExpectOracle(s, 3, [](std::int64_t i) { return 2 * i * 128; }, 224, "vllm dynamic");
  s.seq_len = 100;  // vLLM's cache is static: --seq-len refused
  EXPECT_THROW(ComputeRopeFrequencies(s), Error);
}

TEST(RopeOracle, ChatglmRopeRatio) {
  // base 1e4·500 = 5e6 exactly; ChatGLM's rotary half: rotary dim 8 of head 16.
  SchemeSpec s = Llama("none");
  s.d_model = 16;
  s.rotary_dim = 8;
  s.layout = "interleaved";
  s.rope_ratio = 500;
  s.max_len = 20;
  s.start = 3;
  s.max_position_embeddings = -1;
  TableSet set = MakeTableSet(s);
  auto cos = Read(*set.Find("cos"));
  for (int r = 0; r < 20; ++r)
    for (int j = 0; j < 8; ++j) EXPECT_EQ(cos[r * 8 + j], oracle::SinusoidF32(3 + r, 5e6, 2 * (j / 2), 8, true));
}

// ---- refusals: every new flag out of range, and semantics that do not apply ----

TEST(RopeSemantics, Refusals) {
  auto refused = [](SchemeSpec s, const char* flag) {
    try {
      ComputeRopeFrequencies(s);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "not refused: " << flag;
  };
  SchemeSpec s = Llama("dynamic");
  s.alpha = 0.5;
  refused(s, "--alpha");
  s.alpha = NAN;
  refused(s, "--alpha");
  s = Llama("ntk");
  s.factor = 2;
  s.semantics = "vllm";
  s.mixed_b = 0;
  refused(s, "--mixed-b");
  s.mixed_b = 1e9;
  refused(s, "--mixed-b");
  s.semantics = "hf";
  s.mixed_b = 1;
  refused(s, "--mixed-b");  // HF has no mixed NTK
  s = Llama("longrope");
  s.short_mscale = -3;
  refused(s, "--short-mscale");
  s.short_mscale = -1;
  s.long_mscale = INFINITY;
  refused(s, "--long-mscale");
  s = Llama("none");
  s.rope_ratio = 0;
  refused(s, "--rope-ratio");
  s.rope_ratio = -1;
  s.max_model_len = 0;
  refused(s, "--max-model-len");
  s.max_model_len = -1;
  s.semantics = "hf-4.45";
  refused(s, "--semantics");  // no rule of its own for none
  s = Llama("ntk");
  s.factor = 2;
  s.semantics = "llama.cpp";
  refused(s, "--semantics");  // ggml_rope_ext has no NTK rule
  s = Llama("linear");
  s.factor = 2;
  s.semantics = "hf-4.45";
  refused(s, "--semantics");
  s.semantics = "tgi";
  refused(s, "--semantics");
  s = Llama("yarn");
  s.factor = 2;
  s.semantics = "vllm@2026-05";  // vLLM's YaRN before #56446 has no mscale
  s.mscale = 1;
  refused(s, "--mscale");
  s = Llama("yarn");
  s.factor = 2;
  s.semantics = "vllm";  // after #56446 it reads no attn_factor
  s.attn_factor = 0.8;
  refused(s, "--attn-factor");
  s = Llama("linear");
  s.factor = 2;
  s.alpha = 2;
  refused(s, "--alpha");  // read by dynamic only
  s = Llama("yarn");
  s.factor = 2;
  s.attn_factor = 2;
  refused(s, "--attn-factor");  // transformers has none
  s.semantics = "vllm";
  s.attn_factor = 0;
  refused(s, "--attn-factor");
}

TEST(RopeSemantics, VllmLongropeSwitchByMaxModelLen) {
  SchemeSpec s = Llama("longrope");
  s.d_model = 8;
  s.short_factor = "1,1,1,1";
  s.long_factor = "2,2,2,2";
  s.max_position_embeddings = 131072;
  s.original_max_position_embeddings = 4096;
  s.semantics = "vllm";
  auto r = ComputeRopeFrequencies(s);  // max_model_len = 131072 > 4096: long, whatever the rows
  EXPECT_EQ(MetaToString(*r.meta.Find("ext_factors")), "long");
  const double sf = std::sqrt(1 + std::log(32.0) / std::log(4096.0));
  EXPECT_NEAR(static_cast<double>(r.attention_factor), sf, 1e-15);
  s.max_model_len = 4096;
  r = ComputeRopeFrequencies(s);
  EXPECT_EQ(MetaToString(*r.meta.Find("ext_factors")), "short");
  s.short_mscale = 1.25;
  EXPECT_EQ(static_cast<double>(ComputeRopeFrequencies(s).attention_factor), 1.25);
  s.semantics = "hf";  // HF reads no short_mscale
  EXPECT_THROW(ComputeRopeFrequencies(s), Error);
}

// ---- vLLM's two versions: the cos/sin scale and the dynamic NTK base, as
// vLLM's own classes computed them (tests/data/vllm manifest: the `mscale`
// attribute of YaRNScalingRotaryEmbedding at c8a6e27 and after #56446) ----

TEST(RopeSemantics, VllmVersionsYarnScale) {
  const auto scale = [](const char* sem, double factor, double attn, double ms, double msa) {
    SchemeSpec s = Llama("yarn");
    s.d_model = 128;
    s.factor = factor;
    s.original_max_position_embeddings = 4096;
    s.semantics = sem;
    if (attn > 0) s.attn_factor = attn;
    s.mscale = ms;
    s.mscale_all_dim = msa;
    return static_cast<double>(ComputeRopeFrequencies(s).attention_factor);
  };
  // factor 2, attn_factor 0.8: 2026-05 multiplies (0.85545...), 2026-09 reads no attn_factor.
  EXPECT_NEAR(scale("vllm@2026-05", 2, 0.8, 0, 0), 0.8554517744447957, 1e-15);
  EXPECT_NEAR(scale("vllm@2026-09", 2, -1, 0, 0), 1.0693147180559945, 1e-15);
  // Ministral 3 style, factor 16, mscale = mscale_all_dim = 1: 1.27726 before, 1.0 after.
  EXPECT_NEAR(scale("vllm@2026-05", 16, -1, 0, 0), 1.2772588722239782, 1e-15);
  EXPECT_NEAR(scale("vllm@2026-09", 16, -1, 1, 1), 1.0, 1e-15);
  EXPECT_NEAR(scale("vllm", 16, -1, 1, 1), 1.0, 1e-15);  // plain vllm = the newest
}

TEST(RopeOracle, VllmTrainedDynamic) {
  // vLLM #41277 (dynamic_ntk_scaling_rope.py @117afee): base·(f·max_pos/max_trained
  // − (f−1))^(d/(d−2)); factor 4, max_pos 8192, max_trained 4096: ratio 4·2 − 3 = 5.
  SchemeSpec s = Llama("dynamic");
  s.d_model = 16;
  s.base = 10000;
  s.factor = 4;
  s.max_position_embeddings = 8192;
  s.max_trained_positions = 4096;
  s.semantics = "vllm@2026-09";
  const RopeFrequencies f = ComputeRopeFrequencies(s);
  const double want = 10000 * std::pow(5.0, 16.0 / 14.0);
  EXPECT_NEAR(static_cast<double>(f.inv_freq[1]), std::pow(want, -2.0 / 16), 1e-15);
  s.max_trained_positions = -1;  // absent: max_position, the plain base
  EXPECT_NEAR(static_cast<double>(ComputeRopeFrequencies(s).inv_freq[1]), std::pow(10000.0, -2.0 / 16), 1e-15);
  s.semantics = "vllm@2026-05";  // before #41277: f² − f + 1 = 13
  EXPECT_NEAR(static_cast<double>(ComputeRopeFrequencies(s).inv_freq[1]),
              std::pow(10000 * std::pow(13.0, 16.0 / 14.0), -2.0 / 16), 1e-15);
  s.max_trained_positions = 4096;
  EXPECT_THROW(ComputeRopeFrequencies(s), Error);  // a key that version never reads
}

}  // namespace
}  // namespace pe
