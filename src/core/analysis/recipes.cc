#include "core/analysis/recipes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.h"

namespace pe {
namespace {

float F32(double v) { return static_cast<float>(v); }

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

// Rows of a variant by a non-exact recipe; float64 output.
class RecipeSource : public RowSource {
 public:
  RecipeSource(TableInfo info, SinusoidVariant variant, Recipe recipe)
      : info_(std::move(info)), variant_(std::move(variant)), recipe_(recipe) {
    plan_ = variant_.Plan(info_.cols);
    if (recipe_ == Recipe::kF64Cast)
      w64_ = VariantFrequencies(variant_, info_.cols);
    else
      w32_ = RecipeFrequencies(variant_, info_.cols, plan_.frequencies.size(), recipe_);
  }
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t pairs = plan_.frequencies.size();
    std::vector<double> s(pairs), c(pairs);
    for (std::int64_t r = 0; r < count; ++r) {
      const std::int64_t pos = variant_.start + first + r;
      for (std::size_t i = 0; i < pairs; ++i) {
        if (recipe_ == Recipe::kF64Cast) {
          const double a = static_cast<double>(pos) * w64_[i];
          s[i] = std::sin(a);
          c[i] = std::cos(a);
        } else {
          const float a = static_cast<float>(pos) * w32_[i];  // f32(pos) * ω in float32
          s[i] = F32(std::sin(static_cast<double>(a)));
          c[i] = F32(std::cos(static_cast<double>(a)));
        }
      }
      double* row = reinterpret_cast<double*>(out) + r * info_.cols;
      for (std::size_t j = 0; j < plan_.columns.size(); ++j) {
        const SinusoidColumn col = plan_.columns[j];
        const auto i = static_cast<std::size_t>(col.pair);
        double v = col.kind == SinusoidColumn::kSin ? s[i] : col.kind == SinusoidColumn::kCos ? c[i] : 0.0;
        std::memcpy(&row[j], &v, sizeof v);
      }
    }
  }

 private:
  TableInfo info_;
  SinusoidVariant variant_;
  Recipe recipe_;
  SinusoidPlan plan_;
  std::vector<float> w32_;
  std::vector<double> w64_;
};

// Zeroes the variant's padding rows on top of any source.
class ZeroRowsSource : public RowSource {
 public:
  ZeroRowsSource(std::unique_ptr<RowSource> inner, std::vector<std::int64_t> zero_rows)
      : inner_(std::move(inner)), zero_rows_(std::move(zero_rows)) {}
  const TableInfo& info() const override { return inner_->info(); }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    inner_->ReadRows(first, count, out);
    const std::size_t rb = info().row_bytes();
    for (std::int64_t z : zero_rows_)
      if (z >= first && z < first + count) std::memset(out + static_cast<std::size_t>(z - first) * rb, 0, rb);
  }

 private:
  std::unique_ptr<RowSource> inner_;
  std::vector<std::int64_t> zero_rows_;
};

}  // namespace

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

}  // namespace pe
