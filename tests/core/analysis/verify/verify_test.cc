// Identification, tolerance, property checks and Verify() on tables built
// independently of pe's generators: the MPFR oracle (exact tables) and
// float32 recipes written out here step by step (fairseq's get_embedding).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/analysis/identify/identify.h"
#include "core/analysis/verify/properties.h"
#include "core/analysis/stats.h"
#include "core/analysis/tolerance.h"
#include "core/analysis/verify/verify.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

// A float32 or float64 MemoryRowSource from doubles.
std::unique_ptr<MemoryRowSource> Table(std::int64_t rows, std::int64_t cols, const std::vector<double>& v, DType dtype,
                                       Metadata meta = {}) {
  TableInfo info;
  info.rows = rows;
  info.cols = cols;
  info.dtype = dtype;
  info.meta = std::move(meta);
  std::vector<std::byte> bytes(static_cast<std::size_t>(rows) * info.row_bytes());
  for (std::size_t i = 0; i < v.size(); ++i) StoreFromDouble(bytes.data(), dtype, i, v[i]);
  return std::make_unique<MemoryRowSource>(info, std::move(bytes));
}

// The paper's table (or concatenated / d/2-1 variants) from the MPFR oracle.
std::vector<double> OracleTable(std::int64_t rows, std::int64_t d, std::int64_t start, double base, bool concat, bool half_minus_one,
                                bool f64, bool sin_only = false) {
  const std::int64_t h = d / 2;
  std::vector<double> v(static_cast<std::size_t>(rows * d));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < d; ++j) {
      const std::int64_t i = concat ? j % h : j / 2;
      bool cosine = concat ? j >= h : j % 2 == 1;
      if (sin_only) cosine = false;
      const std::int64_t num = half_minus_one ? i : 2 * i, den = half_minus_one ? h - 1 : d;
      v[static_cast<std::size_t>(r * d + j)] = f64 ? oracle::SinusoidF64(start + r, base, num, den, cosine)
                                                   : oracle::SinusoidF32(start + r, base, num, den, cosine);
    }
  return v;
}

// fairseq get_embedding(rows, d, padding_idx=1), float32 step by step.
std::vector<double> FairseqF32(std::int64_t rows, std::int64_t d) {
  const std::int64_t h = d / 2;
  const float inc = static_cast<float>(std::log(10000.0) / static_cast<double>(h - 1));
  std::vector<double> v(static_cast<std::size_t>(rows * d));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < h; ++k) {
      const float w = std::exp(static_cast<float>(k) * -inc);
      const float a = static_cast<float>(r) * w;
      v[static_cast<std::size_t>(r * d + k)] = r == 1 ? 0.0f : std::sin(a);
      v[static_cast<std::size_t>(r * d + h + k)] = r == 1 ? 0.0f : std::cos(a);
    }
  return v;
}

TEST(Identify, ExactPaperTable) {
  auto t = Table(200, 32, OracleTable(200, 32, 0, 10000, false, false, false), DType::kFloat32);
  const TableStats s = ComputeStats(*t);
  const Identification id = Identify(*t, s);
  ASSERT_TRUE(id.matched) << id.verdict;
  EXPECT_EQ(id.variant.layout, SinusoidLayout::kInterleaved);
  EXPECT_EQ(id.variant.denominator, SinusoidDenominator::kD);
  EXPECT_EQ(id.variant.base, 10000.0);
  EXPECT_EQ(id.variant.start, 0);
  EXPECT_EQ(id.precision, "exact");
  EXPECT_EQ(id.recipes[0].identical, 1.0);  // every entry correctly rounded
}

TEST(Identify, FairseqFloat32WithPaddingRow) {
  auto t = Table(300, 64, FairseqF32(300, 64), DType::kFloat32);
  const TableStats s = ComputeStats(*t);
  ASSERT_EQ(s.zero_rows, std::vector<std::int64_t>{1});
  const Identification id = Identify(*t, s);
  ASSERT_TRUE(id.matched) << id.verdict;
  EXPECT_EQ(id.variant.layout, SinusoidLayout::kConcat);
  EXPECT_EQ(id.variant.denominator, SinusoidDenominator::kHalfMinusOne);
  EXPECT_EQ(id.variant.base, 10000.0);
  EXPECT_EQ(id.variant.start, 0);
  EXPECT_EQ(id.variant.zero_rows, std::vector<std::int64_t>{1});
  EXPECT_EQ(id.precision.rfind("float32 angles", 0), 0u) << id.precision;
  EXPECT_NE(id.known_as.find("fairseq"), std::string::npos);
  // Float32 angles: the error stays within 2^-24·|θ|·(3+2|ln ω|) + 1 ulp.
  EXPECT_LE(id.max_angle_err, 1.0);
  EXPECT_GT(id.max_abs_err, 1e-7);
}

TEST(Identify, OtherBaseAndLateStart) {
  auto t = Table(100, 16, OracleTable(100, 16, 1000, 500000, false, false, true), DType::kFloat64);
  const Identification id = Identify(*t, ComputeStats(*t));
  ASSERT_TRUE(id.matched) << id.verdict;
  EXPECT_EQ(id.variant.base, 500000.0);
  EXPECT_EQ(id.variant.start, 1000);
  EXPECT_EQ(id.precision, "exact");
}

TEST(Identify, SinOnly) {
  auto t = Table(128, 16, OracleTable(128, 16, 0, 10000, false, false, false, true), DType::kFloat32);
  const Identification id = Identify(*t, ComputeStats(*t));
  ASSERT_TRUE(id.matched) << id.verdict;
  EXPECT_TRUE(id.variant.sin_only);
  EXPECT_TRUE(id.variant.zero_rows.empty());  // row 0 is zero by itself, not padding
}

TEST(Identify, RandomTableDoesNotMatch) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> n(0, 0.02);
  std::vector<double> v(100 * 16);
  for (double& x : v) x = n(rng);
  auto t = Table(100, 16, v, DType::kFloat32);
  const Identification id = Identify(*t, ComputeStats(*t));
  EXPECT_FALSE(id.matched);
  EXPECT_NE(id.verdict.find("no match"), std::string::npos);
}

TEST(Tolerance, DefaultRuleByHand) {
  const Tolerance t = DefaultTolerance(DType::kFloat32);
  // ulp_f32(0.5) = 2^-24; no angle known: 1 ulp.
  EXPECT_EQ(t.Limit(0.5, 0, 0), std::ldexp(1.0, -24));
  // θ = 1000 at ω = 1: 2^-24 + 2^-24·1000·3.
  EXPECT_DOUBLE_EQ(t.Limit(0.5, 1000, 1), std::ldexp(1.0, -24) * 3001);
  // ω = e^-2: factor 3 + 2·2 = 7.
  EXPECT_DOUBLE_EQ(t.Limit(0.5, 10, std::exp(-2.0)), std::ldexp(1.0, -24) * (1 + 70));
  const Tolerance e = ExplicitTolerance(DType::kFloat32, 1e-6, 0, 0);
  EXPECT_EQ(e.Limit(0.5, 1000, 1), 1e-6);  // explicit: no angle term
}

PropertyOptions Props(std::vector<std::string> checks, DType dtype) {
  PropertyOptions o;
  o.checks = std::move(checks);
  o.tolerance = DefaultTolerance(dtype);
  return o;
}

TEST(Properties, ExactTablePassesEverything) {
  auto t = Table(400, 32, OracleTable(400, 32, 0, 10000, false, false, false), DType::kFloat32);
  PropertyOptions o = Props(PropertyCheckNames(), DType::kFloat32);
  std::vector<double> head = OracleTable(400, 32, 0, 10000, false, false, false);
  o.pairing = FindPairing(head, 400, 32, {});
  ASSERT_TRUE(o.pairing.found);
  for (const Check& c : RunPropertyChecks(*t, o)) EXPECT_TRUE(c.passed) << c.name << ": " << c.summary;
}

TEST(Properties, SinOnlyFailsRotationInBothForms) {
  const auto v = OracleTable(200, 16, 0, 10000, false, false, false, true);
  auto t = Table(200, 16, v, DType::kFloat32);
  // With the paper's pairing (as verify uses the reference's):
  PropertyOptions o = Props({"rotation"}, DType::kFloat32);
  o.pairing = FindPairing(OracleTable(200, 16, 0, 10000, false, false, false), 200, 16, {});
  auto checks = RunPropertyChecks(*t, o);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].passed);
  EXPECT_EQ(checks[0].details["mode"], "pairs");
  // Without any pairing: the least-squares form.
  o.pairing = Pairing{};
  checks = RunPropertyChecks(*t, o);
  EXPECT_FALSE(checks[0].passed);
  EXPECT_EQ(checks[0].details["mode"], "least-squares");
  EXPECT_GT(checks[0].details["per_k"][0]["relative_residual"].get<double>(), 0.1);
}

TEST(Properties, LeastSquaresFindsTheRotationOfAnExactTable) {
  auto t = Table(200, 16, OracleTable(200, 16, 0, 10000, true, true, true), DType::kFloat64);
  PropertyOptions o = Props({"rotation"}, DType::kFloat64);  // no pairing given
  const auto checks = RunPropertyChecks(*t, o);
  EXPECT_TRUE(checks[0].passed) << checks[0].summary;
  EXPECT_LT(checks[0].details["per_k"][0]["relative_residual"].get<double>(), 1e-9);
}

TEST(Properties, DuplicateRowsAreNotUnique) {
  auto v = OracleTable(50, 8, 0, 10000, false, false, false);
  for (int j = 0; j < 8; ++j) v[static_cast<std::size_t>(31 * 8 + j)] = v[static_cast<std::size_t>(30 * 8 + j)];
  auto t = Table(50, 8, v, DType::kFloat32);
  const auto checks = RunPropertyChecks(*t, Props({"unique", "bounds"}, DType::kFloat32));
  ASSERT_EQ(checks.size(), 2u);  // in PropertyCheckNames() order: bounds, then unique
  EXPECT_EQ(checks[0].name, "bounds");
  EXPECT_TRUE(checks[0].passed);
  EXPECT_FALSE(checks[1].passed);
  EXPECT_EQ(checks[1].details["rows"][0], 30);
  EXPECT_EQ(checks[1].details["rows"][1], 31);
}

TEST(Properties, ANanEntryFailsBoundsAndNormByName) {
  auto v = OracleTable(40, 8, 0, 10000, false, false, false);
  v[3 * 8 + 2] = std::nan("");
  auto t = Table(40, 8, v, DType::kFloat32);
  PropertyOptions o = Props({"bounds", "norm"}, DType::kFloat32);
  o.pairing = FindPairing(OracleTable(40, 8, 0, 10000, false, false, false), 40, 8, {});
  const auto checks = RunPropertyChecks(*t, o);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_FALSE(checks[0].passed);
  EXPECT_NE(checks[0].summary.find("worst nan at row 3, column 2"), std::string::npos) << checks[0].summary;
  EXPECT_FALSE(checks[1].passed);
  EXPECT_NE(checks[1].summary.find("first: row 3"), std::string::npos) << checks[1].summary;
}

TEST(Verify, MetadataFlagsAndConflicts) {
  TableInfo info;
  info.rows = 10;
  info.cols = 8;
  std::vector<std::string> notes;
  EXPECT_FALSE(ResolveReferenceSpec(info, {}, &notes).has_value());  // bare table, no flags
  info.meta.Set("scheme", std::string("sinusoidal"));
  info.meta.Set("base", 10000.0);
  SpecOverrides flags;
  flags.base = 500000.0;
  auto spec = ResolveReferenceSpec(info, flags, &notes);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->base, 500000.0);
  EXPECT_EQ(spec->d_model, 8);
  EXPECT_EQ(spec->max_len, 10);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("--base 500000 overrides"), std::string::npos);
}

TEST(Verify, OneBadEntryIsFoundAndCounted) {
  auto v = OracleTable(64, 16, 0, 10000, false, false, false);
  v[static_cast<std::size_t>(40 * 16 + 5)] += 1e-3;
  Metadata meta;
  meta.Set("scheme", std::string("sinusoidal"));
  auto t = Table(64, 16, v, DType::kFloat32, meta);
  std::vector<std::string> notes;
  VerifyOptions o;
  o.spec = ResolveReferenceSpec(t->info(), {}, &notes);
  const VerifyReport r = Verify(*t, "t", o);
  EXPECT_FALSE(r.passed);
  const Check* ref = nullptr;
  for (const auto& c : r.checks)
    if (c.name == "reference") ref = &c;
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->details["count_over"], 1);
  EXPECT_EQ(ref->details["worst"]["position"], 40);
  EXPECT_EQ(ref->details["worst"]["col"], 5);
  EXPECT_NEAR(ref->details["max_abs_err"].get<double>(), 1e-3, 1e-7);
  // Unperturbed: passes, and the JSON carries the schema and verdict.
  auto good = Table(64, 16, OracleTable(64, 16, 0, 10000, false, false, false), DType::kFloat32, meta);
  const VerifyReport g = Verify(*good, "g", o);
  EXPECT_TRUE(g.passed);
  EXPECT_EQ(g.ToJson()["schema"], "pe.verify/1");
  EXPECT_EQ(g.ToJson()["exit_code"], 0);
}

}  // namespace
}  // namespace pe
