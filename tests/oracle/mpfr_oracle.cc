#include "oracle/mpfr_oracle.h"

#include <mpfr.h>

#include <algorithm>
#include <cmath>

namespace pe::oracle {
namespace {

// Holds sin or cos(pos · base^(-num/den)) at 256 bits in `out`.
void Evaluate(mpfr_t out, std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine) {
  mpfr_t e, b, w, t;
  mpfr_inits2(256, e, b, w, t, (mpfr_ptr)nullptr);
  mpfr_set_si(e, static_cast<long>(-num), MPFR_RNDN);
  mpfr_div_si(e, e, static_cast<long>(den), MPFR_RNDN);  // -num/den
  mpfr_set_d(b, base, MPFR_RNDN);                        // exact
  mpfr_pow(w, b, e, MPFR_RNDN);                          // ω
  mpfr_mul_si(t, w, static_cast<long>(pos), MPFR_RNDN);  // θ
  if (cosine) mpfr_cos(out, t, MPFR_RNDN);
  else mpfr_sin(out, t, MPFR_RNDN);
  mpfr_clears(e, b, w, t, (mpfr_ptr)nullptr);
}

}  // namespace

float SinusoidF32(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine) {
  mpfr_t v;
  mpfr_init2(v, 256);
  Evaluate(v, pos, base, num, den, cosine);
  const float f = mpfr_get_flt(v, MPFR_RNDN);
  mpfr_clear(v);
  return f;
}

double SinusoidF64(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine) {
  mpfr_t v;
  mpfr_init2(v, 256);
  Evaluate(v, pos, base, num, den, cosine);
  const double d = mpfr_get_d(v, MPFR_RNDN);
  mpfr_clear(v);
  return d;
}

long double SinusoidLong(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine) {
  mpfr_t v;
  mpfr_init2(v, 256);
  Evaluate(v, pos, base, num, den, cosine);
  const long double d = mpfr_get_ld(v, MPFR_RNDN);
  mpfr_clear(v);
  return d;
}

double SinusoidRounded(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine, int precision,
                       int min_quantum_exp) {
  mpfr_t v;
  mpfr_init2(v, 256);
  Evaluate(v, pos, base, num, den, cosine);
  double out = 0;
  if (!mpfr_zero_p(v)) {
    // v in [2^(e-1), 2^e): the spacing of `precision`-bit numbers there is
    // 2^(e - precision), or the subnormal quantum below the normal range.
    const long q = std::max<long>(mpfr_get_exp(v) - precision, min_quantum_exp);
    mpfr_div_2si(v, v, q, MPFR_RNDN);  // exact
    mpfr_rint(v, v, MPFR_RNDN);        // ties to even
    mpfr_mul_2si(v, v, q, MPFR_RNDN);  // exact
    out = mpfr_get_d(v, MPFR_RNDN);    // exact: at most 24 bits
  }
  mpfr_clear(v);
  return out;
}

double FrequencyRelError(double base, std::int64_t num, std::int64_t den, double a, double b, double c) {
  mpfr_t e, w, v;
  mpfr_inits2(256, e, w, v, (mpfr_ptr)nullptr);
  mpfr_set_si(e, static_cast<long>(-num), MPFR_RNDN);
  mpfr_div_si(e, e, static_cast<long>(den), MPFR_RNDN);
  mpfr_set_d(w, base, MPFR_RNDN);
  mpfr_pow(w, w, e, MPFR_RNDN);  // ω
  mpfr_set_d(v, a, MPFR_RNDN);   // a + b + c is exact at 256 bits
  mpfr_add_d(v, v, b, MPFR_RNDN);
  mpfr_add_d(v, v, c, MPFR_RNDN);
  mpfr_sub(v, v, w, MPFR_RNDN);
  mpfr_div(v, v, w, MPFR_RNDN);
  const double err = std::fabs(mpfr_get_d(v, MPFR_RNDN));
  mpfr_clears(e, w, v, (mpfr_ptr)nullptr);
  return err;
}

}  // namespace pe::oracle
