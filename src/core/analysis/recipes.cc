#include "core/analysis/recipes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/base/dtype.h"
#include "core/numerics/exact_sincos.h"
#include "core/numerics/float_midpoint.h"

namespace pe {
namespace {

float F32(double v) { return static_cast<float>(v); }

bool SameBits(double a, double b) {
  return __builtin_bit_cast(std::uint64_t, a) == __builtin_bit_cast(std::uint64_t, b);
}

// One float32 frequency per pair, computed the way `recipe` does.
std::vector<float> RecipeFrequencies(const SinusoidVariant& v, std::int64_t cols, std::size_t pairs,
                                     Recipe recipe) {
  std::vector<float> w(pairs);
  for (std::size_t i = 0; i < pairs; ++i) {
    std::int64_t num, den;
    FrequencyExponent(v, cols, static_cast<std::int64_t>(i), &num, &den);
    switch (recipe) {
      case Recipe::kF32Exp: {
        // torch: arange(...).float() * (-math.log(b) / den): the Python
        // double is applied as a float32 scalar; exp in float32.
        const float c = F32(-std::log(v.base) / static_cast<double>(den));
        const float arg = F32(static_cast<float>(num) * c);
        w[i] = F32(std::exp(static_cast<double>(arg)));
        break;
      }
      case Recipe::kF32ExpT2t: {
        // tf: math.log(max/min) / tf.maximum(f32(n) - 1, 1): float32 division.
        const float inc = F32(F32(std::log(v.base)) / static_cast<float>(den));
        const float arg = F32(static_cast<float>(num) * -inc);
        w[i] = F32(std::exp(static_cast<double>(arg)));
        break;
      }
      case Recipe::kF32Pow: {
        // HF: 1.0 / (base ** (arange(0, dim, 2).float() / dim)), all float32.
        const float e = F32(static_cast<float>(num) / static_cast<float>(den));
        const float p = F32(std::pow(static_cast<double>(F32(v.base)), static_cast<double>(e)));
        w[i] = 1.0f / p;
        break;
      }
      default:
        w[i] = 0;
    }
  }
  return w;
}

// Rows of a variant by one or more non-exact recipes, float64 output, one
// buffer per recipe. Per row and pair, each recipe's angle is computed
// first; a recipe whose angle has the bits of an earlier recipe's angle
// takes that recipe's sin and cos (the same libm call on the same argument
// gives the same result), so f32-exp and f32-exp-t2t, whose float32
// frequencies agree for base 10000, cost one sin and cos between them.
class RecipeEval {
 public:
  RecipeEval(const SinusoidVariant& variant, std::int64_t cols, const std::vector<Recipe>& recipes)
      : cols_(cols), start_(variant.start), recipes_(recipes), plan_(variant.Plan(cols)) {
    const std::size_t pairs = plan_.frequencies.size();
    w_.resize(recipes_.size());
    for (std::size_t k = 0; k < recipes_.size(); ++k) {
      if (recipes_[k] == Recipe::kF64Cast) {
        w_[k] = VariantFrequencies(variant, cols);
      } else {
        const std::vector<float> w32 = RecipeFrequencies(variant, cols, pairs, recipes_[k]);
        w_[k].assign(w32.begin(), w32.end());  // float32 values, exact in double
      }
    }
    // Column j of a row is src_[j] of the row's values: sin of pair i at i,
    // cos at pairs + i, a zero column at 2·pairs.
    src_.resize(plan_.columns.size());
    for (std::size_t j = 0; j < src_.size(); ++j) {
      const SinusoidColumn col = plan_.columns[j];
      src_[j] = static_cast<std::uint32_t>(col.kind == SinusoidColumn::kSin   ? col.pair
                                           : col.kind == SinusoidColumn::kCos ? pairs + static_cast<std::size_t>(col.pair)
                                                                              : 2 * pairs);
    }
  }
  std::size_t size() const { return recipes_.size(); }

  /// Rows [first, first + count) of recipe k into out[k] (count·cols doubles).
  void Read(std::int64_t first, std::int64_t count, double* const* out) const {
    const std::size_t pairs = plan_.frequencies.size(), nrec = recipes_.size();
    const std::size_t stride = 2 * pairs + 1;
    // Per recipe: [sin of each pair | cos of each pair | 0] and its angles;
    // then the float32 angles to evaluate (those no earlier recipe shares),
    // their pairs and fast sin/cos. Uninitialised (no zero fill: every
    // slot read is written first).
    std::unique_ptr<double[]> buf(new double[nrec * stride + nrec * pairs + 3 * pairs]);
    std::unique_ptr<std::uint32_t[]> pair_of(new std::uint32_t[pairs]);
    double* const sc = buf.get();
    double* const angle = sc + nrec * stride;
    double* const th = angle + nrec * pairs;
    double* const fs = th + pairs;
    double* const fc = fs + pairs;
    for (std::size_t k = 0; k < nrec; ++k) sc[k * stride + 2 * pairs] = 0.0;
    for (std::int64_t r = 0; r < count; ++r) {
      const std::int64_t pos = start_ + first + r;
      const float pos32 = static_cast<float>(pos);
      for (std::size_t k = 0; k < nrec; ++k) {
        double* const a = angle + k * pairs;
        const double* const w = w_[k].data();
        if (recipes_[k] == Recipe::kF64Cast) {
          const double p = static_cast<double>(pos);
          for (std::size_t i = 0; i < pairs; ++i) a[i] = p * w[i];
        } else {
          // f32(pos) * ω in float32
          for (std::size_t i = 0; i < pairs; ++i) a[i] = static_cast<double>(pos32 * static_cast<float>(w[i]));
        }
      }
      for (std::size_t k = 0; k < nrec; ++k) {
        double* const s = sc + k * stride;
        const double* const a = angle + k * pairs;
        if (recipes_[k] == Recipe::kF64Cast) {
          // The double result itself is the recipe's value: glibc's sincos,
          // the sin and cos values of std::sin and std::cos (one argument
          // reduction for both), as the compiler's sincos fusion of the two
          // calls has always produced here.
          // (Into locals: written straight to s[], GCC split the call into
          // a sin and a cos, twice the time.)
          for (std::size_t i = 0; i < pairs; ++i) {
            double sv, cv;
            ::sincos(a[i], &sv, &cv);
            s[i] = sv;
            s[pairs + i] = cv;
          }
          continue;
        }
        // A float32 recipe: an angle with the bits of an earlier float32
        // recipe's angle takes its values (f32-exp and f32-exp-t2t agree on
        // most frequencies); the others are evaluated together. The first
        // float32 recipe evaluates every angle, straight into place.
        bool earlier = false;
        for (std::size_t q = 0; q < k; ++q) earlier = earlier || recipes_[q] != Recipe::kF64Cast;
        if (!earlier) {
          RecipeSinCosF32(a, pairs, s, s + pairs);
          continue;
        }
        std::size_t m = 0;
        for (std::size_t i = 0; i < pairs; ++i) {
          std::size_t same = k;
          for (std::size_t q = 0; q < k; ++q)
            if (recipes_[q] != Recipe::kF64Cast && SameBits(angle[q * pairs + i], a[i])) {
              same = q;
              break;
            }
          if (same != k) {
            const double* const t = sc + same * stride;
            s[i] = t[i];
            s[pairs + i] = t[pairs + i];
          } else {
            th[m] = a[i];
            pair_of[m] = static_cast<std::uint32_t>(i);
            ++m;
          }
        }
        RecipeSinCosF32(th, m, fs, fc);
        for (std::size_t q = 0; q < m; ++q) {
          const std::size_t i = pair_of[q];
          s[i] = fs[q];
          s[pairs + i] = fc[q];
        }
      }
      for (std::size_t k = 0; k < nrec; ++k) {
        const double* const s = sc + k * stride;
        double* const row = out[k] + static_cast<std::size_t>(r * cols_);
        for (std::size_t j = 0; j < src_.size(); ++j) row[j] = s[src_[j]];
      }
    }
  }

 private:
  std::int64_t cols_, start_;
  std::vector<Recipe> recipes_;
  SinusoidPlan plan_;
  std::vector<std::vector<double>> w_;  ///< per recipe, per pair: ω (float32 recipes: its float32 value)
  std::vector<std::uint32_t> src_;
};

// Rows of a variant by a non-exact recipe; float64 output.
class RecipeSource : public RowSource {
 public:
  RecipeSource(TableInfo info, const SinusoidVariant& variant, Recipe recipe)
      : info_(std::move(info)), eval_(variant, info_.cols, {recipe}) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    double* const o = reinterpret_cast<double*>(out);
    eval_.Read(first, count, &o);
  }
  bool concurrent_reads() const override { return true; }

 private:
  TableInfo info_;
  RecipeEval eval_;
};

// Zeroes the rows of `zero_rows` that fall in the block of rows
// [first, first + count) at `out`.
void ZeroRows(const std::vector<std::int64_t>& zero_rows, std::int64_t first, std::int64_t count, std::size_t row_bytes,
              std::byte* out) {
  for (std::int64_t z : zero_rows)
    if (z >= first && z < first + count) std::memset(out + static_cast<std::size_t>(z - first) * row_bytes, 0, row_bytes);
}

// Zeroes the variant's padding rows on top of any source.
class ZeroRowsSource : public RowSource {
 public:
  ZeroRowsSource(std::unique_ptr<RowSource> inner, std::vector<std::int64_t> zero_rows)
      : inner_(std::move(inner)), zero_rows_(std::move(zero_rows)) {}
  const TableInfo& info() const override { return inner_->info(); }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    inner_->ReadRows(first, count, out);
    ZeroRows(zero_rows_, first, count, info().row_bytes(), out);
  }

 private:
  std::unique_ptr<RowSource> inner_;
  std::vector<std::int64_t> zero_rows_;
};

}  // namespace

// float32(libm sin θ), float32(libm cos θ) for n angles θ (the float32 recipes'
// values: glibc's sincos in double, rounded once to float32), bit for bit,
// mostly without libm.
//
// Why this is exact: let v be sin θ (or cos θ), L glibc's double result and
// y the vectorised kernel's (SinCosF64FastAngles). glibc documents its sin,
// cos and sincos as within 1 ulp (the manual's "Known Maximum Errors" table
// for x86_64; s_sin.c claims 0.548 ulp); we assume 4 ulp, |L - v| <=
// 2^-50·|v|, as kFastF64RelErr does. The kernel's bound (exact_sincos.h) is
// |y - v| <= B = 2^-50·|y| + A with A = FastF64AbsErr(θ). So
//   |L - y| <= B + 2^-50·(|y| + B) < 2^-49·|y|·(1 + 2^-50) + 2·A
// and with e = 2^-48·|y| + 2·A, the computed lo = RN(y - e), hi = RN(y + e)
// still enclose L strictly: each rounding moves an end by at most
// ulp(y) <= 2^-52·|y|, far less than the 2^-49·|y| of slack, and e's own
// rounding (a few 2^-53 relative) is inside that slack too. When the
// patterns of lo and hi agree above bit 27 (MayStraddleFloatMidpoint false:
// one sign, one exponent, which |y| >= 2^-60 puts in float32's normal
// range), no float32 tie lies in (lo, hi], so every real in (lo, hi), L and
// y included, rounds to the same float32: float32(L) == float32(y).
// Otherwise (a value within ~2^-25 float32 ulp of a tie: about 1 entry in
// 10^7; zero angles; |θ| > 2^49) libm is called as before.
// Tested against libm on millions of angles of each recipe and on angles
// whose sin or cos lies next to a float32 tie (recipes_test.cc).
void RecipeSinCosF32(const double* th, std::size_t n, double* s, double* c) {
  std::size_t done = 0;
  // The kernel wants |θ| <= kMaxExactAngle; run it on the prefix that is.
  while (done < n && std::fabs(th[done]) <= 0x1p49) ++done;
  SinCosF64FastAngles(th, done, s, c);
  // The test for every entry without a branch (a loop the compiler
  // vectorises), rounding as it goes; the rare failures are redone below.
  auto pass = [](double y, double a2) {
    const double e = 0x1p-48 * std::fabs(y) + a2;
    const auto lo = __builtin_bit_cast(long long, y - e), hi = __builtin_bit_cast(long long, y + e);
    return static_cast<int>(std::fabs(y) >= 0x1p-60) & static_cast<int>(((lo ^ hi) & ~kBelowFloatMidpointBits) == 0);
  };
  int all = 1;
  for (std::size_t i = 0; i < done; ++i) {
    const double a2 = 2 * FastF64AbsErr(th[i]), ys = s[i], yc = c[i];
    all &= pass(ys, a2) & pass(yc, a2);
    s[i] = static_cast<float>(ys);
    c[i] = static_cast<float>(yc);
  }
  if (all && done == n) return;
  for (std::size_t i = 0; i < n; ++i) {
    if (i < done) {
      double ys, yc;  // the fast values again, for this entry's test
      SinCosF64FastAngles(th + i, 1, &ys, &yc);
      const double a2 = 2 * FastF64AbsErr(th[i]);
      if (pass(ys, a2) && pass(yc, a2)) continue;
    }
    double sv, cv;
    ::sincos(th[i], &sv, &cv);
    s[i] = static_cast<float>(sv);
    c[i] = static_cast<float>(cv);
  }
}

const std::vector<RecipeInfo>& Recipes() {
  static const std::vector<RecipeInfo> kRecipes = {
      {Recipe::kExact, "exact", "the exact value of the formula, correctly rounded (pe's reference)"},
      {Recipe::kF64Cast, "f64-cast", "float64 angles and sin, cast to the output type (XLM, HF Marian, MAE)"},
      {Recipe::kF32Exp, "f32-exp",
       "float32: ω = exp(k·(-ln b/den)), angle = pos·ω, sin in float32 (Annotated Transformer, PyTorch "
       "tutorial, fairseq, HF M2M100/Speech2Text)"},
      {Recipe::kF32ExpT2t, "f32-exp-t2t",
       "float32: inc = f32(ln b)/f32(den) in float32, ω = exp(-k·inc), angle = pos·ω (tensor2tensor)"},
      {Recipe::kF32Pow, "f32-pow",
       "float32: ω = 1/pow(b, k/den), angle = pos·ω (HF RoPE inv_freq, GPT-J)"},
  };
  return kRecipes;
}

const RecipeInfo& RecipeOf(Recipe recipe) {
  for (const auto& r : Recipes())
    if (r.recipe == recipe) return r;
  return Recipes().front();
}

void FrequencyExponent(const SinusoidVariant& v, std::int64_t cols, std::int64_t pair, std::int64_t* num,
                       std::int64_t* den) {
  if (v.denominator == SinusoidDenominator::kD) {
    *num = 2 * pair;
    *den = cols;
  } else {
    *num = pair;
    *den = std::max<std::int64_t>(cols / 2 - 1, 1);
  }
}

SinusoidPlan SinusoidVariant::Plan(std::int64_t cols) const {
  SinusoidPlan plan = BuildSinusoidPlan(cols, base, layout, denominator, odd_rule);
  if (sin_only)
    for (auto& c : plan.columns)
      if (c.kind == SinusoidColumn::kCos) c.kind = SinusoidColumn::kSin;
  return plan;
}

std::vector<double> VariantFrequencies(const SinusoidVariant& v, std::int64_t cols) {
  const std::size_t pairs = BuildSinusoidPlan(cols, v.base, v.layout, v.denominator, v.odd_rule).frequencies.size();
  std::vector<double> w(pairs);
  for (std::size_t i = 0; i < pairs; ++i) {
    std::int64_t num, den;
    FrequencyExponent(v, cols, static_cast<std::int64_t>(i), &num, &den);
    w[i] = std::exp(-std::log(v.base) * static_cast<double>(num) / static_cast<double>(den));
  }
  return w;
}

std::string SinusoidVariant::Describe() const {
  std::string s = layout == SinusoidLayout::kInterleaved ? "interleaved [sin, cos, ...]" : "concatenated [sin | cos]";
  if (sin_only) s += " with every cos column replaced by sin";
  s += denominator == SinusoidDenominator::kD ? fmt::format(", ω_i = {}^(-2i/d) (denominator d)", base)
                                              : fmt::format(", ω_k = {}^(-k/(d/2-1)) (denominator d/2-1)", base);
  s += fmt::format(", first position {}", start);
  if (!zero_rows.empty()) {
    std::string rows;
    for (std::size_t i = 0; i < zero_rows.size() && i < 8; ++i) rows += (i ? "," : "") + std::to_string(zero_rows[i]);
    if (zero_rows.size() > 8) rows += ",...";
    s += fmt::format(", zero row{} {}", zero_rows.size() > 1 ? "s" : "", rows);
  }
  return s;
}

std::string SinusoidVariant::KnownAs() const {
  if (sin_only)  // RoPE's sin tensor repeats each sin θ_i: in both halves, or in both columns of a pair
    return layout == SinusoidLayout::kConcat ? "the sin tensor of RoPE, half (Llama/NeoX) layout; or the sin-only bug"
                                             : "the sin tensor of RoPE, interleaved (GPT-J) layout; or the sin-only bug";
  const bool paper_d = denominator == SinusoidDenominator::kD;
  if (layout == SinusoidLayout::kInterleaved && paper_d)
    return "Vaswani et al. (paper), Annotated Transformer, PyTorch tutorial, XLM";
  if (layout == SinusoidLayout::kConcat && paper_d) return "HF Marian, MAE (1D)";
  if (layout == SinusoidLayout::kConcat && !paper_d) {
    const bool pad_row = zero_rows.size() == 1 && zero_rows[0] == 1 - start;
    if (start == 2 || pad_row) return "fairseq (padding_idx=1), HF M2M100/Speech2Text";
    return "tensor2tensor, fairseq";
  }
  return "";
}

std::unique_ptr<RowSource> MakeVariantSource(const SinusoidVariant& variant, std::int64_t rows, std::int64_t cols,
                                             Recipe recipe, DType narrow) {
  TableInfo info;
  info.rows = rows;
  info.cols = cols;
  info.dtype = DType::kFloat64;
  std::unique_ptr<RowSource> src;
  if (recipe == Recipe::kExact) {
    auto exact = std::make_unique<SinusoidSource>(info, variant.Plan(cols), variant.start);
    if (narrow != DType::kFloat64) exact->SetFastFloat64(narrow);
    src = std::move(exact);
  } else
    src = std::make_unique<RecipeSource>(info, variant, recipe);
  if (variant.zero_rows.empty()) return src;
  return std::make_unique<ZeroRowsSource>(std::move(src), variant.zero_rows);
}

struct VariantRecipeRows::Impl {
  std::int64_t cols = 0;
  std::vector<std::int64_t> zero_rows;
  std::vector<std::unique_ptr<RowSource>> exact;  ///< per recipe: its source if kExact, else null
  std::vector<std::size_t> others;                ///< the non-exact recipes' indices, in RecipeEval's order
  std::unique_ptr<RecipeEval> eval;
};

VariantRecipeRows::VariantRecipeRows(const SinusoidVariant& variant, std::int64_t rows, std::int64_t cols,
                                     const std::vector<Recipe>& recipes, DType narrow)
    : impl_(std::make_unique<Impl>()) {
  impl_->cols = cols;
  impl_->zero_rows = variant.zero_rows;
  std::vector<Recipe> others;
  for (std::size_t k = 0; k < recipes.size(); ++k) {
    if (recipes[k] == Recipe::kExact) {
      impl_->exact.push_back(MakeVariantSource(variant, rows, cols, Recipe::kExact, narrow));
    } else {
      impl_->exact.push_back(nullptr);
      impl_->others.push_back(k);
      others.push_back(recipes[k]);
    }
  }
  if (!others.empty()) impl_->eval = std::make_unique<RecipeEval>(variant, cols, others);
}

VariantRecipeRows::~VariantRecipeRows() = default;

void VariantRecipeRows::Read(std::int64_t first, std::int64_t count, double* const* out) const {
  for (std::size_t k = 0; k < impl_->exact.size(); ++k)
    if (impl_->exact[k]) impl_->exact[k]->ReadRows(first, count, reinterpret_cast<std::byte*>(out[k]));
  if (!impl_->eval) return;
  std::vector<double*> outs;
  for (std::size_t k : impl_->others) outs.push_back(out[k]);
  impl_->eval->Read(first, count, outs.data());
  const std::size_t row_bytes = static_cast<std::size_t>(impl_->cols) * sizeof(double);
  for (double* o : outs) ZeroRows(impl_->zero_rows, first, count, row_bytes, reinterpret_cast<std::byte*>(o));
}

}  // namespace pe
