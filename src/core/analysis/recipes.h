// Sinusoid variants and the float32 recipes real implementations use.
//
// A SinusoidVariant names one member of the sinusoid family as it appears in
// the wild: layout, frequency denominator, base, first position, odd-d rule,
// zeroed padding rows, and the "sin only" bug. A Recipe names how the
// numbers were computed: exactly (pe's reference), or with one of the
// float32 operation orders of schemes.md §1-3 and §9.5, emulated step by
// step (each f32 operation rounded to nearest; exp, pow and sin evaluated in
// double and rounded once, i.e. correctly rounded in practice; frameworks
// whose exp/sin are 1-ulp accurate differ from this in a few entries).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/schemes/sinusoidal.h"
#include "core/base/table.h"

namespace pe {

enum class Recipe : std::uint8_t {
  kExact,      ///< pe's reference: the exact value (rounded by the caller)
  kF64Cast,    ///< float64 angles and sin, then cast (XLM, Marian, MAE)
  kF32Exp,     ///< ω = exp(f32(k)·f32(-ln b/den)) in f32 (Annotated, PyTorch tutorial, fairseq, HF M2M100)
  kF32ExpT2t,  ///< as kF32Exp but inc = f32(ln b) / f32(den) in f32 (tensor2tensor)
  kF32Pow,     ///< ω = 1 / pow(b, f32(k)/f32(den)) in f32 (HF RoPE inv_freq, GPT-J)
};

struct RecipeInfo {
  Recipe recipe;
  std::string_view name;     ///< "f32-exp": stable, used in JSON
  std::string_view summary;  ///< what it computes and who does it
};

/// Every recipe, kExact first.
const std::vector<RecipeInfo>& Recipes();
const RecipeInfo& RecipeOf(Recipe recipe);

/// One member of the sinusoid family, as found in files.
struct SinusoidVariant {
  SinusoidLayout layout = SinusoidLayout::kInterleaved;
  SinusoidDenominator denominator = SinusoidDenominator::kD;
  SinusoidOddRule odd_rule = SinusoidOddRule::kUnpairedSin;
  bool sin_only = false;  ///< every cos column replaced by the sin of its pair (a bug)
  double base = 10000.0;
  std::int64_t start = 0;               ///< position of row 0
  std::vector<std::int64_t> zero_rows;  ///< rows (not positions) set to zero, e.g. fairseq's padding row

  /// The column plan with `cols` columns (frequencies exact).
  SinusoidPlan Plan(std::int64_t cols) const;
  /// "concatenated [sin | cos], ω_k = 10000^(-k/(h-1)) (d/2-1 denominator), first position 2"
  std::string Describe() const;
  /// The implementations this variant is known from ("fairseq", ...); empty if none.
  std::string KnownAs() const;
};

/// The exponent num/den of ω_i = base^(-num/den) for pair i under `variant`.
void FrequencyExponent(const SinusoidVariant& variant, std::int64_t cols, std::int64_t pair,
                       std::int64_t* num, std::int64_t* den);

/// ω_i in double for every pair (for fits, angle bounds and fast scoring).
std::vector<double> VariantFrequencies(const SinusoidVariant& variant, std::int64_t cols);

/// The table of `variant` computed by `recipe`, rows [0, rows), as a float64
/// RowSource (values of float32 recipes are float32 numbers). kExact is
/// within 1 ulp of double of the exact value (pe's SinusoidSource); with
/// `narrow` float32, float16 or bfloat16 it is the fast float64 evaluation
/// instead (SinusoidSource::SetFastFloat64: within 2^-50·|v| + |θ|·2^-98 of
/// the exact value v, and rounding to `narrow` exactly as v does; about 30
/// times cheaper), for comparisons judged in that dtype's ulps.
std::unique_ptr<RowSource> MakeVariantSource(const SinusoidVariant& variant, std::int64_t rows,
                                             std::int64_t cols, Recipe recipe, DType narrow = DType::kFloat64);

/// The float32 recipes' last step for n angles θ_i (doubles, any value):
/// sin_out[i], cos_out[i] = float32(glibc's sincos(θ_i)), bit for bit (as
/// doubles), mostly without calling libm: a vectorised evaluation with a
/// certified error bound decides the rounding wherever it provably agrees
/// with libm's (the proof is at the definition), libm decides the rest.
void RecipeSinCosF32(const double* theta, std::size_t n, double* sin_out, double* cos_out);

/// The tables of `variant` by several recipes at once, for a comparison
/// with all of them: Read gives for recipes[k] the same values as
/// MakeVariantSource(variant, rows, cols, recipes[k], narrow)'s rows, with
/// the sin and cos of an angle that several float32 recipes share (f32-exp
/// and f32-exp-t2t agree on most frequencies) evaluated once.
/// Throws AngleDomainError as MakeVariantSource does.
class VariantRecipeRows {
 public:
  VariantRecipeRows(const SinusoidVariant& variant, std::int64_t rows, std::int64_t cols,
                    const std::vector<Recipe>& recipes, DType narrow = DType::kFloat64);
  ~VariantRecipeRows();
  /// Rows [first, first + count) of recipes[k] into out[k] (count·cols
  /// doubles each, row-major). May run on several threads at once.
  /// REQUIRES: 0 <= first, first + count <= rows.
  void Read(std::int64_t first, std::int64_t count, double* const* out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pe
