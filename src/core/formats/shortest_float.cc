#include "core/formats/shortest_float.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

namespace pe {
namespace {

// "00" "01" ... "99": two digits per step.
constexpr char kDigitPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Decimal digits of n >= 1: from its bit length (log10(2) ≈ 1233/4096),
// then one comparison; no dependent chain of divisions.
inline int CountDigits(std::uint32_t n) {
  static constexpr std::uint32_t kPow10[] = {1,      10,      100,      1000,      10000,
                                             100000, 1000000, 10000000, 100000000, 1000000000};
  const int t = ((32 - __builtin_clz(n | 1)) * 1233) >> 12;
  return t + (n >= kPow10[t] ? 1 : 0);
}

// Writes the `size` digits of n (< 10^9) ending at end (exclusive): all
// nine digits, leading zeros included, are formed at once from independent
// divisions (no chain), then the last `size` are copied.
inline void WriteDigitsBackward(char* end, std::uint32_t n, int size) {
  char nine[10];
  const std::uint32_t top = n / 100000000, rest = n % 100000000;
  const std::uint32_t hi = rest / 10000, lo = rest % 10000;
  nine[0] = static_cast<char>('0' + top);
  std::memcpy(nine + 1, kDigitPairs + 2 * (hi / 100), 2);
  std::memcpy(nine + 3, kDigitPairs + 2 * (hi % 100), 2);
  std::memcpy(nine + 5, kDigitPairs + 2 * (lo / 100), 2);
  std::memcpy(nine + 7, kDigitPairs + 2 * (lo % 100), 2);
  std::memcpy(end - size, nine + 9 - size, static_cast<std::size_t>(size));
}

}  // namespace

char* WriteShortestFloat(char* out, float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (bits >> 31) *out++ = '-';
  bits &= 0x7fffffffu;
  if (bits >= 0x7f800000u) {  // fmt's non-finite spellings
    const char* s = bits > 0x7f800000u ? "nan" : "inf";
    std::memcpy(out, s, 3);
    return out + 3;
  }
  if (bits == 0) {
    *out++ = '0';
    return out;
  }
  float a;
  std::memcpy(&a, &bits, 4);
  const auto dec = fmt::detail::dragonbox::to_decimal(a);
  const std::uint32_t sig = dec.significand;
  const int size = CountDigits(sig);
  const int output_exp = dec.exponent + size - 1;  // value = d.ddd × 10^output_exp
  if (output_exp < -4 || output_exp >= 16) {
    // d[.ddd]e±XX
    char* p = out;
    if (size == 1) {
      *p++ = static_cast<char>('0' + sig);
    } else {
      // Digits at p+1 .. p+size, then the first moves before the point.
      WriteDigitsBackward(p + 1 + size, sig, size);
      p[0] = p[1];
      p[1] = '.';
      p += size + 1;
    }
    *p++ = 'e';
    int e = output_exp;
    if (e < 0) {
      *p++ = '-';
      e = -e;
    } else {
      *p++ = '+';
    }
    if (e >= 100) {  // not reached by float32 (|e| <= 45), kept for the contract
      *p++ = static_cast<char>('0' + e / 100);
      e %= 100;
    }
    std::memcpy(p, kDigitPairs + 2 * e, 2);
    return p + 2;
  }
  if (dec.exponent >= 0) {
    // 1234e2 -> 123400
    WriteDigitsBackward(out + size, sig, size);
    std::memset(out + size, '0', static_cast<std::size_t>(dec.exponent));
    return out + size + dec.exponent;
  }
  const int int_digits = size + dec.exponent;  // digits before the point
  if (int_digits > 0) {
    // 1234e-2 -> 12.34
    WriteDigitsBackward(out + size + 1, sig, size);
    std::memmove(out, out + 1, static_cast<std::size_t>(int_digits));
    out[int_digits] = '.';
    return out + size + 1;
  }
  // 1234e-6 -> 0.001234
  const int zeros = -int_digits;
  out[0] = '0';
  out[1] = '.';
  std::memset(out + 2, '0', static_cast<std::size_t>(zeros));
  WriteDigitsBackward(out + 2 + zeros + size, sig, size);
  return out + 2 + zeros + size;
}

}  // namespace pe
