// The domain of exact evaluation (docs/numerics.md, "Domain"): every dtype
// right against the MPFR oracle up to the largest accepted angle |p·ω| =
// 2^50 (the float32 table fast path with its vector anchors, the quad path
// of float16/bfloat16/float64, sinusoidal and RoPE), and tables whose
// angles would go beyond (2^50 + a little, 2^52, 2^56), or whose values
// would not be finite, refused with the parameter named.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/analysis/blocks.h"
#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/schemes/registry.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

constexpr std::int64_t kP40 = std::int64_t{1} << 40;

struct Fmt {
  int precision, min_quantum_exp;
};
Fmt FormatOf(DType d) {
  switch (d) {
    case DType::kFloat16: return {11, -24};
    case DType::kBFloat16: return {8, -133};
    default: return {24, -149};
  }
}

std::vector<double> Rows(const SchemeSpec& spec) {
  auto src = MakeGenerator(spec);
  std::vector<std::byte> scratch;
  std::vector<double> out;
  ReadRowsAsDouble(*src, 0, spec.max_len, &scratch, &out);
  return out;
}

// Every entry of `spec` against the oracle; column j is sin/cos of
// pos·base^(-num(j)/den). float32, float16, bfloat16: equal to the exact
// value correctly rounded; float64: within 1 ulp + |θ|·2^-104 (ω's 113
// bits; docs/numerics.md).
template <typename ColFn>
int CheckAgainstOracle(const SchemeSpec& spec, double max_omega, ColFn col, double scale = 1) {
  const std::vector<double> t = Rows(spec);
  int bad = 0;
  for (std::int64_t r = 0; r < spec.max_len; ++r)
    for (std::int64_t j = 0; j < spec.d_model; ++j) {
      const std::int64_t pos = spec.start + r;
      std::int64_t num, den;
      bool cosine;
      col(j, &num, &den, &cosine);
      const double got = t[static_cast<std::size_t>(r * spec.d_model + j)];
      bool ok;
      double want;
      if (spec.dtype == DType::kFloat64) {
        want = scale * oracle::SinusoidF64(pos, spec.base, num, den, cosine);  // scale: a power of two
        const double ulp = std::nextafter(std::fabs(want), HUGE_VAL) - std::fabs(want);
        ok = std::fabs(got - want) <= ulp + scale * std::fabs(static_cast<double>(pos)) * max_omega * 0x1p-104;
      } else {
        const Fmt f = FormatOf(spec.dtype);
        want = scale * oracle::SinusoidRounded(pos, spec.base, num, den, cosine, f.precision, f.min_quantum_exp);
        ok = got == want;
      }
      if (!ok && ++bad <= 5)
        ADD_FAILURE() << spec.scheme << " " << Traits(spec.dtype).name << " pos=" << pos << " col=" << j << " got "
                      << got << " want " << want;
    }
  return bad;
}

const DType kAll[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};

SchemeSpec Sinusoidal(std::int64_t d, double base, std::int64_t start, std::int64_t rows, DType dtype) {
  SchemeSpec s;
  s.scheme = "sinusoidal";
  s.d_model = d;
  s.base = base;
  s.start = start;
  s.max_len = rows;
  s.dtype = dtype;
  return s;
}

void PaperColumn(std::int64_t d, std::int64_t j, std::int64_t* num, std::int64_t* den, bool* cosine) {
  *num = 2 * (j / 2);
  *den = d;
  *cosine = j % 2 == 1;
}

TEST(Domain, SinusoidalUpToTheLargestAcceptedAngleInEveryDtype) {
  // base 2^-20: ω_1 = 2^10, so position 2^40 reaches exactly 2^50, the
  // largest accepted angle; 300 rows cross the float32 anchors (every 128).
  for (DType dt : kAll) {
    const SchemeSpec s = Sinusoidal(4, 0x1p-20, kP40 - 299, 300, dt);
    EXPECT_EQ(CheckAgainstOracle(s, 0x1p10, [](std::int64_t j, auto* n, auto* d, bool* c) { PaperColumn(4, j, n, d, c); }),
              0);
  }
  // An ω that is not a power of two, near 2^50 and near 2^46.
  const double base = 3e-6;
  const double w = std::pow(base, -6.0 / 8.0);
  for (double angle : {0x1p50, 0x1p46}) {
    const auto start = static_cast<std::int64_t>(angle / w) - 200;
    for (DType dt : kAll) {
      const SchemeSpec s = Sinusoidal(8, base, start, 200, dt);
      EXPECT_EQ(CheckAgainstOracle(s, w, [](std::int64_t j, auto* n, auto* d, bool* c) { PaperColumn(8, j, n, d, c); }),
                0);
    }
  }
}

TEST(Domain, RopeUpToTheLargestAcceptedAngleInEveryDtype) {
  for (const char* tensor : {"cos", "sin"})
    for (DType dt : kAll) {
      SchemeSpec s;
      s.scheme = "rope";
      s.d_model = 4;  // head dim: inv_freq = base^(-2i/4), i = 0, 1
      s.base = 0x1p-20;
      s.start = kP40 - 299;
      s.max_len = 300;
      s.dtype = dt;
      s.tensor = tensor;
      const bool cosine = std::string(tensor) == "cos";
      EXPECT_EQ(CheckAgainstOracle(s, 0x1p10,
                                   [cosine](std::int64_t j, std::int64_t* n, std::int64_t* d, bool* c) {
                                     *n = 2 * (j % 2);  // half layout: column j uses frequency j mod 2
                                     *d = 4;
                                     *c = cosine;
                                   }),
                0)
          << tensor;
    }
}

TEST(Domain, ScaledRopeUpToTheLargestAcceptedAngleInEveryDtype) {
  // --attention-factor 2: the scaled rotary path (its own double evaluation
  // with a certified bound, then quad); 2·v rounds as v does.
  for (const char* tensor : {"cos", "sin"})
    for (DType dt : kAll) {
      SchemeSpec s;
      s.scheme = "rope";
      s.d_model = 4;
      s.base = 0x1p-20;
      s.start = kP40 - 299;
      s.max_len = 300;
      s.dtype = dt;
      s.tensor = tensor;
      s.attention_factor = 2;
      const bool cosine = std::string(tensor) == "cos";
      EXPECT_EQ(CheckAgainstOracle(
                    s, 0x1p10,
                    [cosine](std::int64_t j, std::int64_t* n, std::int64_t* d, bool* c) {
                      *n = 2 * (j % 2);
                      *d = 4;
                      *c = cosine;
                    },
                    2.0),
                0)
          << tensor;
    }
}

// The usage error a spec gets, or "" when it is accepted.
std::string ErrorOf(const SchemeSpec& s) {
  try {
    MakeTableSet(s);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
    return e.what();
  }
  return "";
}

TEST(Domain, AnglesBeyondTwoToTheFiftyAreRefused) {
  // 2^50 exactly is accepted; a little more, 2^52 and 2^56 are refused,
  // in every dtype, for sinusoidal, RoPE, xPos and tensor2tensor.
  for (DType dt : kAll) {
    EXPECT_EQ(ErrorOf(Sinusoidal(4, 0x1p-20, kP40 - 1, 2, dt)), "");
    for (double base : {0x1.fffffp-21, 0x1p-24, 0x1p-32}) {  // ω_1 = 2^10·(1+2^-21), 2^12, 2^16
      const std::string e = ErrorOf(Sinusoidal(4, base, kP40 - 1, 2, dt));
      EXPECT_NE(e.find("--base: "), std::string::npos) << e;
      EXPECT_NE(e.find("angles up to"), std::string::npos) << e;
      EXPECT_NE(e.find("2^50"), std::string::npos) << e;
      for (const char* scheme : {"rope", "xpos", "marian", "fairseq", "sin-only"}) {
        SchemeSpec s = Sinusoidal(4, base, kP40 - 1, 2, dt);
        s.scheme = scheme;
        if (std::string(scheme) == "fairseq") s.start = kP40 - 2;
        const std::string es = ErrorOf(s);
        EXPECT_NE(es.find("2^50"), std::string::npos) << scheme << ": " << es;
      }
    }
  }
  // Base 2^-24 at position 2^40 - 1: angles near 2^52.
  EXPECT_NE(ErrorOf(Sinusoidal(4, 5.9604644775390625e-08, 1099511627775, 1, DType::kFloat32)).find("4.5e+15 rad"),
            std::string::npos);
  // tensor2tensor multiplies by min_timescale: 1e18 makes ω = 1e18.
  SchemeSpec t = Sinusoidal(8, 10000, 0, 4, DType::kFloat32);
  t.scheme = "tensor2tensor";
  t.min_timescale = 1e18;
  EXPECT_NE(ErrorOf(t).find("--min-timescale: 1e+18 with positions up to 3"), std::string::npos) << ErrorOf(t);
  // Bases that make ω infinite or NaN.
  for (const char* scheme : {"sinusoidal", "marian", "sin-only", "rope", "xpos"}) {
    SchemeSpec s = Sinusoidal(4, 5e-324, 0, 2, DType::kFloat32);
    s.scheme = scheme;
    EXPECT_NE(ErrorOf(s).find("--base"), std::string::npos) << scheme;
    s.base = 1e-40;
    EXPECT_NE(ErrorOf(s).find("2^50"), std::string::npos) << scheme;
  }
}

TEST(Domain, NonFiniteValuesAreRefused) {
  SchemeSpec l = Sinusoidal(4, 10000, 0, 2, DType::kFloat32);
  l.scheme = "learned";
  l.sigma = 1e308;
  EXPECT_NE(ErrorOf(l).find("--sigma"), std::string::npos);
  l.sigma = 1e4;
  l.dtype = DType::kFloat16;  // 8.58·10^4 > 65504
  EXPECT_NE(ErrorOf(l).find("float16"), std::string::npos);
  l.sigma = 1000;
  EXPECT_EQ(ErrorOf(l), "");
  // RoPE inv_freq as a float16 tensor: base 1e-6 makes inv_freq 1000 (ok)
  // at head dim 4; base 1e-12 makes 10^6 (inf in float16).
  SchemeSpec r = Sinusoidal(4, 1e-6, 0, 2, DType::kFloat16);
  r.scheme = "rope";
  EXPECT_EQ(ErrorOf(r), "");
  r.base = 1e-12;
  EXPECT_NE(ErrorOf(r).find("inv_freq"), std::string::npos) << ErrorOf(r);
  // xPos scale (2/7)^(n/scale_base) for negative n: overflow refused.
  SchemeSpec x = Sinusoidal(4, 10000, 0, 100, DType::kFloat16);
  x.scheme = "xpos";
  x.scale_base = 1e-3;
  EXPECT_NE(ErrorOf(x).find("--scale-base"), std::string::npos) << ErrorOf(x);
  x.scale_base = 512;
  EXPECT_EQ(ErrorOf(x), "");
}

TEST(Domain, WidthAboveTwoToTheTwentyIsRefused) {
  for (const char* scheme : {"sinusoidal", "learned", "rope", "xpos", "sincos-2d"}) {
    SchemeSpec s = Sinusoidal(std::int64_t{1} << 31, 10000, 0, 1, DType::kFloat32);
    s.scheme = scheme;
    s.grid_h = s.grid_w = 1;
    const std::string e = ErrorOf(s);
    EXPECT_NE(e.find("maximum width of 1048576"), std::string::npos) << scheme << ": " << e;
  }
  EXPECT_EQ(ErrorOf(Sinusoidal(kMaxWidth, 10000, 0, 1, DType::kFloat32)), "");
}

}  // namespace
}  // namespace pe

namespace pe {
namespace {

// The vectorised anchors (SinCosBatch::F64Fast, the fast path's exact
// evaluations every 128 rows, and verify's reference for narrow files)
// within their bound 2^-50·|y| + |θ|·2^-98 near the largest angle: there
// θ·2/π rounds with an error of up to 0.2, so k is often one off and the
// reduced argument must be brought back under π/4 (table_kernel-inl.h).
TEST(Domain, VectorAnchorsKeepTheirBoundNearTwoToTheFifty) {
  const double base = 0x1p-20;
  const std::int64_t d = 128;  // ω_i = 2^(20·2i/128) = 2^(0.3125·i), i = 0..32: up to 2^10
  std::vector<Frequency> f = PowerFrequencies(base, 33, 2, d);
  SinCosBatch batch(f);
  double worst = 0;
  for (std::int64_t k = 0; k < 400; ++k) {
    const std::int64_t pos = kP40 - 7919 * k;
    std::vector<double> s(f.size()), c(f.size());
    batch.F64Fast(pos, s.data(), c.data());
    for (std::size_t i = 0; i < f.size(); ++i) {
      const double theta = static_cast<double>(pos) * f[i].hi;
      for (bool cosine : {false, true}) {
        const double y = cosine ? c[i] : s[i];
        const long double exact = oracle::SinusoidLong(pos, base, 2 * static_cast<std::int64_t>(i), d, cosine);
        const double err = static_cast<double>(std::fabs(static_cast<long double>(y) - exact));
        const double bound = std::fabs(y) * 0x1p-50 + FastF64AbsErr(theta);
        worst = std::max(worst, err / bound);
        if (err > bound) {
          ADD_FAILURE() << "pos=" << pos << " i=" << i << (cosine ? " cos" : " sin") << " err " << err << " bound "
                        << bound;
          return;
        }
      }
    }
  }
  std::printf("largest error / bound: %.3g\n", worst);
}

}  // namespace
}  // namespace pe
