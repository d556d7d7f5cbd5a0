// The relative position schemes (core/schemes/relative.h) against
// independent expectations: hand-derived index tables (Shaw/tensor2tensor,
// HF BERT relative_key), DeBERTa-v2 buckets worked out by hand at the
// branch boundaries (|i-j| = mid-1, mid, mid+1, max_position-1, ...),
// KERPLE at distances 0, 1 and r2·d = e-1, Sandwich's closed form for one
// frequency, Transformer-XL's R against the MPFR oracle (exact, both
// dtypes), and the usage errors (k < 0, r1/r2 <= 0, sizes refused before
// any allocation). The peers' own code is run in
// tests/clients/test_schemes_relative.py.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/schemes/registry.h"
#include "core/schemes/relative.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

std::vector<double> ReadAllValues(const SchemeSpec& spec, TableInfo* info = nullptr) {
  auto src = MakeGenerator(spec);
  const TableInfo& t = src->info();
  if (info) *info = t;
  std::vector<std::byte> buf(static_cast<std::size_t>(t.rows) * t.row_bytes());
  src->ReadRows(0, t.rows, buf.data());
  std::vector<double> out(static_cast<std::size_t>(t.rows * t.cols));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = LoadAsDouble(buf.data(), t.dtype, k);
  return out;
}

SchemeSpec Rel(const char* scheme, std::int64_t q, DType dtype = DType::kFloat64) {
  SchemeSpec s;
  s.scheme = scheme;
  s.max_len = q;
  s.dtype = dtype;
  return s;
}

void ExpectUsage(const SchemeSpec& spec, const std::string& needle) {
  try {
    MakeGenerator(spec);
    ADD_FAILURE() << "accepted; expected an error naming " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// ---- relative-index ----
TEST(RelativeIndex, ShawHandTable) {
  // clamp(j - i, -1, 1) + 1 for q = k = 3.
  SchemeSpec s = Rel("relative-index", 3);
  s.max_relative_position = 1;
  EXPECT_EQ(ReadAllValues(s), (std::vector<double>{1, 2, 2, 0, 1, 2, 0, 0, 1}));
  // q = 2 of k = 4: the queries are keys 2 and 3 (tensor2tensor's
  // range_vec_k[-length_q:]); k = 2.
  s.max_len = 2;
  s.key_len = 4;
  s.max_relative_position = 2;
  EXPECT_EQ(ReadAllValues(s), (std::vector<double>{0, 1, 2, 3, 0, 0, 1, 2}));
  EXPECT_EQ(ShawIndex(0, 100, 5), 10);
  EXPECT_EQ(ShawIndex(100, 0, 5), 0);
  EXPECT_EQ(ShawIndex(7, 7, 0), 0);
}

TEST(RelativeIndex, HfBertHandTable) {
  // i - j + P - 1 with P = 3, q = 2, k = 3.
  SchemeSpec s = Rel("relative-index", 2);
  s.convention = "hf-bert";
  s.key_len = 3;
  s.max_position_embeddings = 3;
  EXPECT_EQ(ReadAllValues(s), (std::vector<double>{2, 1, 0, 3, 2, 1}));
}

TEST(RelativeIndex, Errors) {
  SchemeSpec s = Rel("relative-index", 4);
  s.max_relative_position = -2;
  ExpectUsage(s, "--max-relative-position");
  s.max_relative_position = -1;  // unset
  ExpectUsage(s, "clipping distance");
  s.max_relative_position = 3;
  s.key_len = 2;  // q > k
  ExpectUsage(s, "last q");
  s.key_len = -1;
  s.convention = "hf-bert";
  s.max_position_embeddings = 3;  // q = 4 > P
  ExpectUsage(s, "max_position_embeddings");
  // [2^30, 2^20] float32 is 4 PiB: refused by size before anything exists.
  SchemeSpec big = Rel("relative-index", std::int64_t{1} << 30, DType::kFloat32);
  big.key_len = std::int64_t{1} << 20;
  big.max_relative_position = 2;
  ExpectUsage(big, "exceed");
  big.key_len = (std::int64_t{1} << 20) + 1;  // a row wider than pe's maximum width
  ExpectUsage(big, "--key-len");
  SchemeSpec f16 = Rel("relative-index", 2000, DType::kFloat16);
  f16.max_relative_position = 1025;  // index up to 1025 + 1025 = 2050 > 2048
  ExpectUsage(f16, "--dtype float16");
  f16.max_len = 4;  // j - i' <= 3: indices up to 1028 fit float16 exactly
  EXPECT_NO_THROW(MakeGenerator(f16));
}

// ---- deberta-bucket ----
TEST(DebertaBucket, HandBoundaries) {
  // bucket_size 256 (mid 128), max_position 512; both arithmetics.
  for (bool f64 : {false, true}) {
    EXPECT_EQ(DebertaBucket(0, 256, 512, f64), 0);
    EXPECT_EQ(DebertaBucket(127, 256, 512, f64), 127);    // |rel| < mid: itself
    EXPECT_EQ(DebertaBucket(-127, 256, 512, f64), -127);
    EXPECT_EQ(DebertaBucket(128, 256, 512, f64), 128);    // abs_pos = mid <= mid: itself
    EXPECT_EQ(DebertaBucket(-128, 256, 512, f64), -128);
    // 129: ceil(ln(129/128)/ln(511/128)·127) = ceil(0.714) = 1 -> 129.
    EXPECT_EQ(DebertaBucket(129, 256, 512, f64), 129);
    EXPECT_EQ(DebertaBucket(-129, 256, 512, f64), -129);
    // 200: ln(1.5625)/ln(3.9921875)·127 = 40.94 -> 41 + 128.
    EXPECT_EQ(DebertaBucket(200, 256, 512, f64), 169);
    // 511 = max_position - 1: the ratio is exactly 1 -> 127 + 128.
    EXPECT_EQ(DebertaBucket(511, 256, 512, f64), 255);
    EXPECT_EQ(DebertaBucket(-511, 256, 512, f64), -255);
    // 512: ln 4/ln 3.9921875·127 = 127.18 -> 128 + 128 (past the bucket range).
    EXPECT_EQ(DebertaBucket(512, 256, 512, f64), 256);
    // 1000: ln 7.8125/ln 3.9921875·127 = 188.59 -> 189 + 128.
    EXPECT_EQ(DebertaBucket(-1000, 256, 512, f64), -317);
    // bucket_size 8 (mid 4), max_position 64: 6 -> ceil(ln 1.5/ln 15.75·3) = 1 -> 5; 63 -> 3 + 4.
    EXPECT_EQ(DebertaBucket(6, 8, 64, f64), 5);
    EXPECT_EQ(DebertaBucket(63, 8, 64, f64), 7);
    EXPECT_EQ(DebertaBucket(-64, 8, 64, f64), -8);
  }
  // Where the arithmetics part (bucket_size 512, max_position 4096; golden
  // values from running HF's torch function and microsoft's numpy function,
  // tests/clients/test_schemes_relative.py): the float32 quotient rounds
  // onto an integer that the float64 one exceeds.
  EXPECT_EQ(DebertaBucket(-1643, 512, 4096, false), -427);
  EXPECT_EQ(DebertaBucket(-1643, 512, 4096, true), -428);
  EXPECT_EQ(DebertaBucket(6395, 512, 4096, false), 552);
  EXPECT_EQ(DebertaBucket(6395, 512, 4096, true), 553);
}

TEST(DebertaBucket, TableIsQueryMinusKey) {
  SchemeSpec s = Rel("deberta-bucket", 2);
  s.key_len = 3;
  s.bucket_size = 8;
  s.max_position = 64;
  EXPECT_EQ(ReadAllValues(s), (std::vector<double>{0, -1, -2, 1, 0, -1}));
}

TEST(DebertaBucket, Errors) {
  SchemeSpec s = Rel("deberta-bucket", 4);
  s.bucket_size = 3;
  ExpectUsage(s, "--bucket-size");
  s.bucket_size = 256;
  s.max_position = 129;  // (max-1)/mid = 1: log 0
  ExpectUsage(s, "--max-position");
  s.max_position = 512;
  s.convention = "numpy";
  ExpectUsage(s, "--convention");
  SchemeSpec bf = Rel("deberta-bucket", 2000, DType::kBFloat16);  // buckets beyond 256
  ExpectUsage(bf, "--dtype bfloat16");
}

// ---- transformer-xl: exact against MPFR ----
TEST(TransformerXl, MatchesMpfrReversedAndClamped) {
  for (std::int64_t clamp : {0, 5}) {
    for (DType dt : {DType::kFloat64, DType::kFloat32}) {
      SchemeSpec s = Rel("transformer-xl", 12, dt);
      s.d_model = 10;
      s.clamp_len = clamp;
      const std::vector<double> v = ReadAllValues(s);
      const std::int64_t d = 10, h = 5;
      for (std::int64_t r = 0; r < 12; ++r) {
        std::int64_t pos = 12 - 1 - r;
        if (clamp > 0 && pos > clamp) pos = clamp;
        for (std::int64_t c = 0; c < d; ++c) {
          const bool cosine = c >= h;
          const std::int64_t i = c % h;  // ω_i = 10000^(-2i/d)
          const double want = dt == DType::kFloat64 ? oracle::SinusoidF64(pos, 10000, 2 * i, d, cosine)
                                                    : oracle::SinusoidF32(pos, 10000, 2 * i, d, cosine);
          EXPECT_EQ(v[static_cast<std::size_t>(r * d + c)], want) << "row " << r << " col " << c << " clamp " << clamp;
        }
      }
    }
  }
}

TEST(TransformerXl, BlocksReadInPiecesAgree) {
  SchemeSpec s = Rel("transformer-xl", 300, DType::kFloat32);
  s.d_model = 8;
  s.clamp_len = 100;
  const std::vector<double> whole = ReadAllValues(s);
  auto src = MakeGenerator(s);
  std::vector<std::byte> buf(static_cast<std::size_t>(7) * src->info().row_bytes());
  for (std::int64_t first = 0; first < 300; first += 7) {
    const std::int64_t n = std::min<std::int64_t>(7, 300 - first);
    src->ReadRows(first, n, buf.data());
    for (std::int64_t k = 0; k < n * 8; ++k)
      ASSERT_EQ(LoadAsDouble(buf.data(), DType::kFloat32, static_cast<std::size_t>(k)),
                whole[static_cast<std::size_t>(first * 8 + k)]);
  }
}

TEST(TransformerXl, Errors) {
  SchemeSpec s = Rel("transformer-xl", 4);
  s.d_model = 7;
  ExpectUsage(s, "even");
  s.d_model = 8;
  s.clamp_len = -3;
  ExpectUsage(s, "--clamp-len");
  s.clamp_len = 0;
  s.layout = "interleaved";
  ExpectUsage(s, "--layout");
}

// ---- kerple ----
TEST(Kerple, HandValues) {
  // log form: d = 0 -> 0; r2 = 1, d = 1 -> -r1·ln 2; power form: d = 4,
  // r2 = 0.5 -> -2·r1; d = 0 -> 0.
  EXPECT_EQ(static_cast<double>(KerpleBias(false, 3, 0.5, 0)), 0.0);
  EXPECT_EQ(static_cast<double>(KerpleBias(false, 1, 1, 1)), -M_LN2);
  EXPECT_EQ(static_cast<double>(KerpleBias(true, 1.5, 0.5, 4)), -3.0);
  EXPECT_EQ(static_cast<double>(KerpleBias(true, 1.5, 2, 3)), -13.5);
  EXPECT_EQ(static_cast<double>(KerpleBias(true, 1.5, 0.5, 0)), 0.0);
  // r2·d = e - 1: log(e) = 1, so the bias is -r1 (float32: the double
  // r2 = e-1 is within 2^-53 of it, far inside half a float32 ulp).
  SchemeSpec s = Rel("kerple", 3, DType::kFloat32);
  s.r1 = "2,0.5";
  s.r2 = "1.718281828459045";
  TableInfo info;
  const std::vector<double> v = ReadAllValues(s, &info);
  ASSERT_EQ(info.shape, (std::vector<std::int64_t>{2, 3, 3}));
  EXPECT_EQ(v[3], -2.0);       // head 0, i = 1, j = 0
  EXPECT_EQ(v[9 + 3], -0.5);   // head 1, i = 1, j = 0
  EXPECT_EQ(v[1], 0.0);        // causal: j > i is 0
  EXPECT_EQ(v[0], 0.0);        // d = 0
}

TEST(Kerple, OffsetsAndBidirectional) {
  SchemeSpec s = Rel("kerple", 4);
  s.r1 = "1";
  s.r2 = "2";
  s.kerple_form = "power";
  s.rel_form = "offsets";
  EXPECT_EQ(ReadAllValues(s), (std::vector<double>{0, -1, -4, -9}));
  s.rel_form = "matrix";
  s.bidirectional = true;
  s.max_len = 2;
  s.key_len = 3;
  EXPECT_EQ(ReadAllValues(s), (std::vector<double>{0, -1, -4, -1, 0, -1}));
}

TEST(Kerple, Errors) {
  SchemeSpec s = Rel("kerple", 4);
  s.r2 = "1";
  ExpectUsage(s, "--r1");  // missing
  s.r1 = "0";
  ExpectUsage(s, "--r1");
  s.r1 = "1,-2";
  ExpectUsage(s, "--r1");
  s.r1 = "1";
  s.r2 = "0";
  ExpectUsage(s, "--r2");
  s.r2 = "inf";
  ExpectUsage(s, "--r2");
  s.r2 = "2.5";
  s.kerple_form = "power";
  ExpectUsage(s, "--r2");
  s.kerple_form = "exp";
  ExpectUsage(s, "--kerple-form");
  s.kerple_form = "log";
  s.r2 = "1,2,3";
  s.heads = 2;
  ExpectUsage(s, "--r2");
  // 2^20 heads × 2^10 distances: refused before the lookup is allocated.
  SchemeSpec big = Rel("kerple", 1 << 10);
  big.r1 = "1";
  big.r2 = "1";
  big.heads = 1 << 20;
  ExpectUsage(big, "precomputed");
}

// ---- sandwich ----
TEST(Sandwich, OneFrequencyClosedForm) {
  // d' = 2, base 1: ω_1 = 1, bias = (cos r - 1)/(8h/H).
  SchemeSpec s = Rel("sandwich", 6);
  s.d_model = 2;
  s.base = 1;
  s.heads = 4;
  s.rel_form = "offsets";
  const std::vector<double> v = ReadAllValues(s);
  for (std::int64_t h = 1; h <= 4; ++h)
    for (std::int64_t r = 0; r < 6; ++r) {
      const double want = (std::cos(static_cast<double>(r)) - 1) * 4 / (8.0 * h);
      EXPECT_NEAR(v[static_cast<std::size_t>((h - 1) * 6 + r)], want, 4e-16) << "h " << h << " r " << r;
    }
  EXPECT_EQ(v[0], 0.0);  // distance 0: Σ cos = d/2 exactly
  EXPECT_NEAR(static_cast<double>(SandwichBias(3, 2, 1, 2, 4)), (std::cos(3.0) - 1) / 4, 4e-16);
}

TEST(Sandwich, MatrixIsNeMoSliceAndTril) {
  // q = 2, k = 3: distance |i - j + k - q|; causal zeroes j > i of the slice.
  SchemeSpec s = Rel("sandwich", 2);
  s.d_model = 2;
  s.base = 1;
  s.key_len = 3;
  const std::vector<double> causal = ReadAllValues(s);
  const auto b = [](double r) { return (std::cos(r) - 1) / 8; };
  const std::vector<double> want_causal = {b(1), 0, 0, b(2), b(1), 0};
  for (std::size_t k = 0; k < 6; ++k) EXPECT_NEAR(causal[k], want_causal[k], 4e-16) << k;
  s.bidirectional = true;
  const std::vector<double> full = ReadAllValues(s);
  const std::vector<double> want_full = {b(1), b(0), b(1), b(2), b(1), b(0)};
  for (std::size_t k = 0; k < 6; ++k) EXPECT_NEAR(full[k], want_full[k], 4e-16) << k;
}

TEST(Sandwich, Errors) {
  SchemeSpec s = Rel("sandwich", 4);
  s.d_model = 5;
  ExpectUsage(s, "even");
  s.d_model = 8;
  s.rel_form = "diagonal";
  ExpectUsage(s, "--rel-form");
  s.rel_form = "matrix";
  s.start = 3;
  ExpectUsage(s, "--start");
  SchemeSpec work = Rel("sandwich", 1 << 14);
  work.d_model = 1 << 16;
  ExpectUsage(work, "cosines");
}

TEST(ParseHeadList, Lists) {
  EXPECT_EQ(ParseHeadList("1.5", "--r1"), (std::vector<double>{1.5}));
  EXPECT_EQ(ParseHeadList("1, 2.5,+3e-1", "--r1"), (std::vector<double>{1, 2.5, 0.3}));
  EXPECT_THROW(ParseHeadList("1,,2", "--r1"), Error);
  EXPECT_THROW(ParseHeadList("1,x", "--r1"), Error);
  EXPECT_THROW(ParseHeadList("nan", "--r1"), Error);
  EXPECT_THROW(ParseHeadList("", "--r1"), Error);
}

}  // namespace
}  // namespace pe
