// M-RoPE and the 2-D vision RoPEs (core/schemes/mrope.h, vision_rope.h)
// against independent expectations: hand-derived get_rope_index ids and
// section maps (transformers models/qwen2_vl get_rope_index,
// apply_multimodal_rotary_pos_emb; models/qwen3_vl apply_interleaved_mrope),
// and MPFR (256 bits, rounded once) for every table entry of small tables:
// cos/sin(id · base^(-num/den)) through the oracle, DINOv3's
// 2π·((2i+1-M)/M)·base^(-4k/D) directly.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <vector>

#include "core/base/error.h"
#include "core/schemes/registry.h"
#include "core/schemes/mrope.h"
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

TEST(Mrope, LayoutIdsFollowGetRopeIndex) {
  // text 0,1 | image 1x2x3 at s = 2: t = 2; h = 2,2,2,3,3,3; w = 2,3,4,2,3,4 |
  // text at max + 1 = 5: 5, 6 | image 2x1x1 at 7: t = 7, 8; h = w = 7.
  const MropePositions p = MropePositionsFromLayout("text:2,image:1x2x3,text:2,video:2x1x1");
  ASSERT_EQ(p.len, 12);
  const std::vector<std::int64_t> t = {0, 1, 2, 2, 2, 2, 2, 2, 5, 6, 7, 8};
  const std::vector<std::int64_t> h = {0, 1, 2, 2, 2, 3, 3, 3, 5, 6, 7, 7};
  const std::vector<std::int64_t> w = {0, 1, 2, 3, 4, 2, 3, 4, 5, 6, 7, 7};
  for (std::int64_t r = 0; r < p.len; ++r) {
    EXPECT_EQ(p.at(0, r), t[r]) << r;
    EXPECT_EQ(p.at(1, r), h[r]) << r;
    EXPECT_EQ(p.at(2, r), w[r]) << r;
  }
  // Two images back to back (text_len 0): the second starts at max + 1.
  const MropePositions q = MropePositionsFromLayout("image:4x2,image:1x1");
  EXPECT_EQ(q.at(0, 8), 4);
  EXPECT_EQ(q.at(1, 8), 4);
  EXPECT_THROW(MropePositionsFromLayout("text:0"), Error);
  EXPECT_THROW(MropePositionsFromLayout("text:3,"), Error);
  EXPECT_THROW(MropePositionsFromLayout("image:2x2x2x2"), Error);
}

TEST(Mrope, SectionMaps) {
  EXPECT_EQ(MropeAxes({1, 2, 1}, 4, false), (std::vector<int>{0, 1, 1, 2}));
  // Qwen3-VL [24, 20, 20]: THW repeating up to 60, then t; 24 t, 20 h, 20 w.
  const std::vector<int> a = MropeAxes({24, 20, 20}, 64, true);
  int count[3] = {0, 0, 0};
  for (int i = 0; i < 64; ++i) ++count[a[static_cast<std::size_t>(i)]];
  EXPECT_EQ(count[0], 24);
  EXPECT_EQ(count[1], 20);
  EXPECT_EQ(count[2], 20);
  EXPECT_EQ(a[58], 1);
  EXPECT_EQ(a[59], 2);
  EXPECT_EQ(a[61], 0);
  EXPECT_EQ(a[62], 0);
  EXPECT_THROW(ParseMropeSection("16,24,23", 64), Error);
  EXPECT_THROW(ParseMropeSection("16,24", 64), Error);
  EXPECT_EQ(ParseMropeSection("[16, 24, 24]", 64), (std::array<std::int64_t, 3>{16, 24, 24}));
}

void ExpectMropeAgainstOracle(bool interleaved) {
  SchemeSpec s;
  s.scheme = "mrope";
  s.d_model = 24;
  s.base = 1e6;
  s.mrope_section = interleaved ? "4,4,4" : "2,5,5";
  s.mrope_interleaved = interleaved;
  s.mrope_layout = "text:3,image:2x3x4,text:2";
  TableSet set = MakeTableSet(s);
  const MropePositions p = MropePositionsFromLayout(s.mrope_layout);
  const std::vector<int> axes = MropeAxes(ParseMropeSection(s.mrope_section, 12), 12, interleaved);
  const std::vector<double> c = Read(*set.Find("cos")), sn = Read(*set.Find("sin"));
  for (std::int64_t r = 0; r < p.len; ++r)
    for (std::int64_t j = 0; j < 24; ++j) {
      const std::int64_t i = j % 12;
      const std::int64_t id = p.at(axes[static_cast<std::size_t>(i)], r);
      const auto k = static_cast<std::size_t>(r * 24 + j);
      EXPECT_EQ(c[k], oracle::SinusoidF32(id, 1e6, 2 * i, 24, true)) << r << "," << j;
      EXPECT_EQ(sn[k], oracle::SinusoidF32(id, 1e6, 2 * i, 24, false)) << r << "," << j;
    }
}

TEST(Mrope, ChunkedEntriesAreCorrectlyRounded) { ExpectMropeAgainstOracle(false); }
TEST(Mrope, InterleavedEntriesAreCorrectlyRounded) { ExpectMropeAgainstOracle(true); }

TEST(VisionRope, PixtralAndQwen2VlEntriesAreCorrectlyRounded) {
  SchemeSpec s;
  s.scheme = "vision-rope";
  s.variant = "pixtral";
  s.d_model = 20;  // 10 frequencies: 5 to rows (even i), 5 to columns (odd i)
  s.grid_h = 3;
  s.grid_w = 5;
  TableSet px = MakeTableSet(s);
  const std::vector<double> c = Read(*px.Find("cos"));
  for (std::int64_t r = 0; r < 15; ++r)
    for (std::int64_t j = 0; j < 20; ++j) {
      const std::int64_t k = j % 10;
      const std::int64_t i = k < 5 ? 2 * k : 2 * (k - 5) + 1, id = k < 5 ? r / 5 : r % 5;
      EXPECT_EQ(c[static_cast<std::size_t>(r * 20 + j)], oracle::SinusoidF32(id, 10000, 2 * i, 20, true)) << r << "," << j;
    }
  s.variant = "qwen2-vl";
  s.d_model = 16;
  s.grid_h = 4;
  s.grid_w = 6;
  s.frames = 2;
  s.dtype = DType::kFloat64;
  TableSet qv = MakeTableSet(s);
  const std::vector<double> sn = Read(*qv.Find("sin"));
  ASSERT_EQ(sn.size(), 2u * 24u * 16u);
  // Merge windows of 2x2 over a 4x6 grid: rows 0..3 are (0,0),(0,1),(1,0),(1,1), rows 4..7 (0,2),(0,3),(1,2),(1,3).
  const std::int64_t hs[8] = {0, 0, 1, 1, 0, 0, 1, 1}, ws[8] = {0, 1, 0, 1, 2, 3, 2, 3};
  for (std::int64_t f = 0; f < 2; ++f)
    for (std::int64_t r = 0; r < 8; ++r)
      for (std::int64_t j = 0; j < 16; ++j) {
        const std::int64_t k = j % 8, id = k < 4 ? hs[r] : ws[r], kk = k % 4;
        const double want = oracle::SinusoidF64(id, 10000, 4 * kk, 16, false);
        const double got = sn[static_cast<std::size_t>((f * 24 + r) * 16 + j)];
        EXPECT_LE(std::fabs(got - want), std::fabs(want) * 0x1p-52) << f << "," << r << "," << j;
      }
}

TEST(VisionRope, Dinov3EntriesAreCorrectlyRounded) {
  SchemeSpec s;
  s.scheme = "vision-rope";
  s.variant = "dinov3";
  s.d_model = 16;
  s.grid_h = 3;
  s.grid_w = 7;
  s.normalize_coords = "max";
  TableSet set = MakeTableSet(s);  // base 10000 = unset -> 100
  const std::vector<double> c = Read(*set.Find("cos"));
  mpfr_t a, e, two_pi;
  mpfr_inits2(256, a, e, two_pi, (mpfr_ptr)nullptr);
  mpfr_const_pi(two_pi, MPFR_RNDN);
  mpfr_mul_ui(two_pi, two_pi, 2, MPFR_RNDN);
  for (std::int64_t r = 0; r < 21; ++r)
    for (std::int64_t j = 0; j < 16; ++j) {
      const std::int64_t k = j % 8;
      const std::int64_t id = k < 4 ? 2 * (r / 7) + 1 - 7 : 2 * (r % 7) + 1 - 7;  // M = max(3, 7)
      mpfr_set_si(e, -4 * (k % 4), MPFR_RNDN);
      mpfr_div_si(e, e, 16, MPFR_RNDN);
      mpfr_ui_pow(a, 100, e, MPFR_RNDN);  // ω
      mpfr_mul(a, a, two_pi, MPFR_RNDN);
      mpfr_mul_si(a, a, id, MPFR_RNDN);
      mpfr_div_si(a, a, 7, MPFR_RNDN);
      mpfr_cos(a, a, MPFR_RNDN);
      EXPECT_EQ(c[static_cast<std::size_t>(r * 16 + j)], mpfr_get_flt(a, MPFR_RNDN)) << r << "," << j;
    }
  mpfr_clears(a, e, two_pi, (mpfr_ptr)nullptr);
}

// Angles that are whole quarter turns (M = 14: id = ±7 gives ±π, k = 0):
// the exact cos/sin is 0 or ±1, and so is the entry, in every dtype. The
// oracle is MPFR's cospi/sinpi of x = 2·id·ω/M (π's multiples exact), rounded
// once to the dtype's precision; float64 within 1 ulp elsewhere.
TEST(VisionRope, Dinov3QuarterTurnsAreExact) {
  for (const DType dt : {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16}) {
    SchemeSpec s;
    s.scheme = "vision-rope";
    s.variant = "dinov3";
    s.d_model = 16;
    s.grid_h = 14;
    s.grid_w = 14;
    s.dtype = dt;
    TableSet set = MakeTableSet(s);
    const int prec = dt == DType::kFloat32 ? 24 : dt == DType::kFloat64 ? 53 : dt == DType::kBFloat16 ? 8 : 11;
    int exact_entries = 0;
    for (const bool cosine : {true, false}) {
      const std::vector<double> t = Read(*set.Find(cosine ? "cos" : "sin"));
      mpfr_t x, w, v;
      mpfr_inits2(256, x, w, v, (mpfr_ptr)nullptr);
      for (std::int64_t r = 0; r < 196; ++r)
        for (std::int64_t j = 0; j < 16; ++j) {
          const std::int64_t k = j % 8;
          const std::int64_t id = k < 4 ? 2 * (r / 14) + 1 - 14 : 2 * (r % 14) + 1 - 14;
          mpfr_set_si(w, -4 * (k % 4), MPFR_RNDN);
          mpfr_div_si(w, w, 16, MPFR_RNDN);
          mpfr_ui_pow(w, 100, w, MPFR_RNDN);  // ω = 100^(-4k/D)
          mpfr_mul_si(x, w, 2 * id, MPFR_RNDN);
          mpfr_div_si(x, x, 14, MPFR_RNDN);
          if (cosine) mpfr_cospi(v, x, MPFR_RNDN);
          else mpfr_sinpi(v, x, MPFR_RNDN);
          mpfr_prec_round(v, prec, MPFR_RNDN);
          const double want = mpfr_get_d(v, MPFR_RNDN);
          const double got = t[static_cast<std::size_t>(r * 16 + j)];
          const bool quarter = k % 4 == 0 && (4 * id) % 14 == 0;
          if (quarter) {
            ASSERT_TRUE(want == 0 || want == 1 || want == -1) << want;
            ++exact_entries;
          }
          if (dt == DType::kFloat64 && !quarter)
            EXPECT_LE(std::fabs(got - want), std::ldexp(1.0, std::ilogb(want) - 52)) << r << "," << j;
          else
            EXPECT_EQ(got, want) << Traits(dt).name << (cosine ? " cos " : " sin ") << r << "," << j;
        }
      mpfr_clears(x, w, v, (mpfr_ptr)nullptr);
    }
    EXPECT_EQ(exact_entries, 2 * 2 * 2 * 14 * 2);  // both tables, both axes, 2 column copies, 14 rows per id, id = ±7
  }
}

// An explicit --base is used, 10000 included; only an absent one is 100.
TEST(VisionRope, Dinov3ExplicitBaseIsUsed) {
  SchemeSpec s;
  s.scheme = "vision-rope";
  s.variant = "dinov3";
  s.d_model = 8;
  s.grid_h = 2;
  s.grid_w = 2;
  TableSet def = MakeTableSet(s);
  EXPECT_EQ(MetaToString(*def.meta.Find("base")), "100");
  s.given.insert("base");
  TableSet given = MakeTableSet(s);
  EXPECT_EQ(MetaToString(*given.meta.Find("base")), "10000");
  // Column k = 1 of the width axis: 2π·id·base^(-1/2)/M, M = 2, id = 1.
  const std::vector<double> c = Read(*given.Find("cos"));
  EXPECT_EQ(static_cast<float>(c[3]), static_cast<float>(std::cos(2 * M_PI * 0.01 / 2)));
}

}  // namespace
}  // namespace pe
