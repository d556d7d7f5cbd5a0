#include "core/numerics/schubfach_x8.h"

// GCC 12 warns that its own AVX-512 intrinsics read an uninitialised
// value (their _mm512_undefined_* operands; GCC bug 105593, fixed in 13).
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "core/base/cpu_dispatch.h"

namespace pe {
namespace {

#include "core/numerics/schubfach_tables.inc"

#define PE_AVX512 __attribute__((target("arch=x86-64-v4"), always_inline)) inline

// Schubfach's rop(g, cb·2^h): the high 64 bits of that product (x1),
// shifted right by 31 and rounded to odd (its last bit sticky for the bits
// below). AVX-512 has no 64-bit high multiply, but cb < 2^26: with
// a = g_lo·cb and b = g_hi·cb (g = g_hi·2^32 + g_lo, two 32 x 32 -> 64
// products), g·cb·2^h = (b·2^32 + a)·2^h, so with sh = 64 - h in [28, 31]
// x1 = b·2^(32 - sh) + floor(a / 2^sh) exactly. The callers get a and b of
// the interval's ends from those of its middle by adding multiples of
// g_lo and g_hi (cb ± 1 or 2).
PE_AVX512 __m512i RoundToOdd(__m512i a, __m512i b, __m512i sh, __m512i up) {
  const __m512i x1 = _mm512_add_epi64(_mm512_sllv_epi64(b, up), _mm512_srlv_epi64(a, sh));
  const __mmask8 sticky = _mm512_test_epi64_mask(x1, _mm512_set1_epi64(0xffffffff));
  const __m512i vbp = _mm512_srli_epi64(x1, 31);
  return _mm512_mask_or_epi64(vbp, sticky, vbp, _mm512_set1_epi64(1));
}

// x / d as (x · m) >> s, m = ceil(2^s / d) < 2^32: exact when
// x · (m·d - 2^s) < 2^s, which holds for every x below 2^31 with the
// constants used here (for d = 10, 100, 10^4, 10^8, and Java's 10 for s).
PE_AVX512 __m512i Div(__m512i x, unsigned m, unsigned s) {
  return _mm512_srli_epi64(_mm512_mul_epu32(x, _mm512_set1_epi64(m)), s);
}

PE_AVX512 __m512i Times10(__m512i x) {
  return _mm512_add_epi64(_mm512_slli_epi64(x, 3), _mm512_slli_epi64(x, 1));
}

// The text's parts of eight values from their digits r and exponents e
// (|v| = r·10^e, no trailing zeros): the digit count, and the digits
// left-aligned (r·10^(9 - size), nine digits) as a leading character and
// eight more in one 64-bit word (SWAR: halves of four digits, pairs,
// digits, every lane at once).
PE_AVX512 void Store(__m512i r, __m512i e, DecimalRun* out, std::size_t i) {
  const __m512i one = _mm512_set1_epi64(1);
  alignas(64) static constexpr std::uint64_t kPow10[16] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                                          100000000, 1000000000};
  const __m512i pow_lo = _mm512_load_si512(kPow10), pow_hi = _mm512_load_si512(kPow10 + 8);
  // Digits: from the bit length (log10 2 ≈ 1233 / 4096), then one comparison.
  const __m512i bit_length = _mm512_sub_epi64(_mm512_set1_epi64(64), _mm512_lzcnt_epi64(_mm512_or_si512(r, one)));
  const __m512i guess = _mm512_srli_epi64(_mm512_mul_epu32(bit_length, _mm512_set1_epi64(1233)), 12);
  const __m512i size = _mm512_mask_add_epi64(
      guess, _mm512_cmpge_epu64_mask(r, _mm512_permutex2var_epi64(pow_lo, guess, pow_hi)), guess, one);
  const __m512i nine = _mm512_mul_epu32(
      r, _mm512_permutex2var_epi64(pow_lo, _mm512_sub_epi64(_mm512_set1_epi64(9), size), pow_hi));
  const __m512i lead = Div(nine, 0xABCC7712u, 58);  // / 10^8
  const __m512i rest = _mm512_sub_epi64(nine, _mm512_mul_epu32(lead, _mm512_set1_epi64(100000000)));
  const __m512i hi = Div(rest, 0xD1B71759u, 45);  // / 10^4
  const __m512i lo = _mm512_sub_epi64(rest, _mm512_mul_epu32(hi, _mm512_set1_epi64(10000)));
  __m512i w = _mm512_or_si512(hi, _mm512_slli_epi64(lo, 32));  // 32-bit lanes of four digits
  __m512i t = _mm512_and_si512(_mm512_srli_epi32(_mm512_mullo_epi32(w, _mm512_set1_epi32(10486)), 20),
                               _mm512_set1_epi32(0x7f));  // / 100
  w = _mm512_or_si512(_mm512_slli_epi32(_mm512_sub_epi32(w, _mm512_mullo_epi32(t, _mm512_set1_epi32(100))), 16), t);
  t = _mm512_and_si512(_mm512_srli_epi16(_mm512_mullo_epi16(w, _mm512_set1_epi16(103)), 10),
                       _mm512_set1_epi16(0xf));  // / 10
  w = _mm512_or_si512(_mm512_slli_epi16(_mm512_sub_epi16(w, _mm512_mullo_epi16(t, _mm512_set1_epi16(10))), 8), t);
  _mm512_storeu_si512(out->digits + i, _mm512_or_si512(w, _mm512_set1_epi8('0')));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out->lead + i),
                   _mm512_cvtepi64_epi8(_mm512_add_epi64(lead, _mm512_set1_epi64('0'))));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out->size + i), _mm512_cvtepi64_epi8(size));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out->sig + i), _mm512_cvtepi64_epi32(r));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out->exp + i), _mm512_cvtepi64_epi32(e));
}

// Eight values from v into out at i; returns the mask of the values left
// to the caller.
PE_AVX512 unsigned Decimals8(const void* v, DecimalRun* out, std::size_t i) {
  const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1);
  const __m512i bits =
      _mm512_and_si512(_mm512_cvtepu32_epi64(_mm256_loadu_si256(static_cast<const __m256i*>(v))),
                       _mm512_set1_epi64(0x7fffffff));
  const __m512i t = _mm512_and_si512(bits, _mm512_set1_epi64(0x7fffff));  // the fraction field
  __m512i bq = _mm512_srli_epi64(bits, 23);                                  // the biased exponent
  const __mmask8 special = _mm512_cmpeq_epi64_mask(bq, zero) | _mm512_cmpeq_epi64_mask(bq, _mm512_set1_epi64(255));
  bq = _mm512_mask_mov_epi64(bq, special, one);  // any valid table entry for those
  const __m512i c = _mm512_or_si512(t, _mm512_set1_epi64(0x800000));  // the 24-bit significand
  // Below a power of two (fraction 0) the interval is narrower underneath.
  const __mmask8 narrow = _mm512_cmpeq_epi64_mask(t, zero);
  const __m512i entry = _mm512_mask_add_epi64(_mm512_slli_epi64(_mm512_sub_epi64(bq, one), 1), narrow,
                                              _mm512_slli_epi64(_mm512_sub_epi64(bq, one), 1), one);
  const __m512i g = _mm512_i64gather_epi64(entry, kSchubfachG, 8);
  const __m512i kh = _mm512_i64gather_epi64(entry, kSchubfachKH, 8);
  const __m512i k = _mm512_sub_epi64(_mm512_and_si512(kh, _mm512_set1_epi64(0xffffffff)), _mm512_set1_epi64(64));
  const __m512i h = _mm512_srli_epi64(kh, 32);
  const __m512i g_lo = _mm512_and_si512(g, _mm512_set1_epi64(0xffffffff)), g_hi = _mm512_srli_epi64(g, 32);
  // The interval (cbl, cbr) around cb = 4c, scaled by 10^-k: its middle
  // and ends from one pair of products (RoundToOdd).
  const __m512i cb = _mm512_slli_epi64(c, 2);
  const __m512i a = _mm512_mul_epu32(g_lo, cb), b = _mm512_mul_epu32(g_hi, cb);
  const __m512i a2 = _mm512_slli_epi64(g_lo, 1), b2 = _mm512_slli_epi64(g_hi, 1);
  // cbl = cb - 2, or cb - 1 below a power of two.
  const __m512i al = _mm512_mask_sub_epi64(_mm512_sub_epi64(a, a2), narrow, a, g_lo);
  const __m512i bl = _mm512_mask_sub_epi64(_mm512_sub_epi64(b, b2), narrow, b, g_hi);
  const __m512i sh = _mm512_sub_epi64(_mm512_set1_epi64(64), h);
  const __m512i up = _mm512_sub_epi64(_mm512_set1_epi64(32), sh);
  const __m512i vb = RoundToOdd(a, b, sh, up);
  const __m512i vbl = RoundToOdd(al, bl, sh, up);
  const __m512i vbr = RoundToOdd(_mm512_add_epi64(a, a2), _mm512_add_epi64(b, b2), sh, up);
  // odd = 1 when c is odd: the interval's ends are then excluded.
  const __m512i odd = _mm512_and_si512(c, one);
  const __m512i lower = _mm512_add_epi64(vbl, odd);
  const __m512i upper = _mm512_sub_epi64(vbr, odd);
  const __m512i s = _mm512_srli_epi64(vb, 2);
  // One digit fewer: the multiples of ten below and above s.
  const __m512i s10 = Div(s, 1717986919u, 34), sp10 = Times10(s10);
  const __m512i tp10 = _mm512_add_epi64(sp10, _mm512_set1_epi64(10));
  const __mmask8 upin = _mm512_cmple_epu64_mask(lower, _mm512_slli_epi64(sp10, 2));
  const __mmask8 wpin = _mm512_cmple_epu64_mask(_mm512_slli_epi64(tp10, 2), upper);
  const __mmask8 shorter =
      _mm512_cmpge_epu64_mask(s, _mm512_set1_epi64(100)) & static_cast<__mmask8>(upin ^ wpin);
  // Otherwise s or s + 1, whichever lies inside alone, else the nearer
  // (ties to even).
  const __m512i s1 = _mm512_add_epi64(s, one);
  const __mmask8 uin = _mm512_cmple_epu64_mask(lower, _mm512_slli_epi64(s, 2));
  const __mmask8 win = _mm512_cmple_epu64_mask(_mm512_slli_epi64(s1, 2), upper);
  const __m512i cmp = _mm512_sub_epi64(vb, _mm512_slli_epi64(_mm512_add_epi64(s, s1), 1));
  const __mmask8 take_s = _mm512_cmplt_epi64_mask(cmp, zero) |
                          (_mm512_cmpeq_epi64_mask(cmp, zero) & _mm512_testn_epi64_mask(s, one));
  __m512i r = _mm512_mask_blend_epi64(take_s, s1, s);
  r = _mm512_mask_blend_epi64(static_cast<__mmask8>(uin ^ win), r, _mm512_mask_blend_epi64(uin, s1, s));
  // The shorter candidates as their digits, without the final 0: s/10 or
  // s/10 + 1, at exponent k + 1.
  r = _mm512_mask_blend_epi64(shorter, r, _mm512_mask_blend_epi64(upin, _mm512_add_epi64(s10, one), s10));
  __m512i e = _mm512_mask_add_epi64(k, shorter, k, one);
  // Integers below 2^24 are their own digits (Java's fast path, kept as
  // it is): 126 < bq < 150 and no fraction bits below the point.
  const __m512i mq = _mm512_sub_epi64(_mm512_set1_epi64(150), bq);
  const __m512i whole = _mm512_srlv_epi64(c, mq);
  const __mmask8 integer = _mm512_cmpgt_epi64_mask(bq, _mm512_set1_epi64(126)) &
                           _mm512_cmplt_epi64_mask(bq, _mm512_set1_epi64(150)) &
                           _mm512_cmpeq_epi64_mask(_mm512_sllv_epi64(whole, mq), c);
  r = _mm512_mask_mov_epi64(r, integer, whole);
  e = _mm512_mask_mov_epi64(e, integer, zero);
  // Trailing zeros off, up to 15: 10^8, 10^4, 10^2, 10 in turn; rare in
  // tables, so skipped unless some lane ends in 0.
  if (_mm512_cmpeq_epi64_mask(Times10(Div(r, 0xCCCCCCCDu, 35)), r) == 0) {
    Store(r, e, out, i);
    return special;
  }
  const struct {
    unsigned m, s, p, n;
  } kSteps[] = {{0xABCC7712u, 58, 100000000u, 8}, {0xD1B71759u, 45, 10000u, 4}, {0x51EB851Fu, 37, 100u, 2},
                {0xCCCCCCCDu, 35, 10u, 1}};
  for (const auto& step : kSteps) {
    const __m512i q = Div(r, step.m, step.s);
    const __mmask8 exact = _mm512_cmpeq_epi64_mask(_mm512_mul_epu32(q, _mm512_set1_epi64(step.p)), r);
    r = _mm512_mask_mov_epi64(r, exact, q);
    e = _mm512_mask_add_epi64(e, exact, e, _mm512_set1_epi64(step.n));
  }
  Store(r, e, out, i);
  return special;
}

}  // namespace

bool ShortestDecimalsAvailable() {
  return cpu::Allows(cpu::Isa::kAvx512);
}

__attribute__((target("arch=x86-64-v4"))) void ShortestDecimals(const void* v, std::size_t n, DecimalRun* out) {
  const auto* bytes = static_cast<const unsigned char*>(v);
  // Eight at a time, the groups independent of each other: inlined in one
  // loop, the core overlaps their long chains (gathers, products, the
  // trailing-zero steps).
  for (std::size_t i = 0; i < n; i += 8)
    out->special[i / 8] = static_cast<std::uint8_t>(Decimals8(bytes + 4 * i, out, i));
}

}  // namespace pe
