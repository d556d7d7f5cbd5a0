#include "core/numerics/shortest_float.h"

#include <fmt/format.h>

#include "core/numerics/schubfach_x8.h"

#include <algorithm>
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

inline std::uint64_t Pair(std::uint32_t n) {  // two ASCII digits of n < 100
  std::uint16_t v;
  std::memcpy(&v, kDigitPairs + 2 * n, 2);
  return v;
}

// Writes the `size` (1-9) digits of n < 10^size at p and returns p + size,
// without a branch on the data (branches on the digit count or the sign
// were mispredicted about every other value): the nine digits, leading
// zeros included, are formed in a 16-byte register from independent
// divisions, shifted so that the last `size` come first, and stored at
// once. Bytes after the returned end, up to p + 16, are scratch
// (kShortestFloatRoom).
inline char* PutDigits(char* p, std::uint32_t n, int size) {
  const std::uint32_t top = n / 100000000, rest = n % 100000000;
  const std::uint32_t hi = rest / 10000, lo = rest % 10000;
  const std::uint64_t eight = Pair(hi / 100) | Pair(hi % 100) << 16 | Pair(lo / 100) << 32 | Pair(lo % 100) << 48;
  unsigned __int128 nine = static_cast<unsigned __int128>(eight) << 8 | ('0' + top);
  nine >>= 8 * (9 - size);  // little-endian: the first digit is the lowest byte
  std::memcpy(p, &nine, 16);
  return p + size;
}

// Fixed notation below 1, the text of most values of an encoding table
// (0.001234 = 1.234 × 10^point, -5 < point < 0): writes "0." and the
// zeros (scratch bytes after them) and returns where the digits go.
inline bool BelowOne(int point) { return point < 0 && point >= -4; }
inline char* PutZeroPoint(char* out, int point) {
  std::memcpy(out, "0.0000", 6);  // "0." and up to four zeros
  return out + 1 - point;
}

// The text of sig·10^exponent (sig > 0, no trailing zeros), as fmt
// writes a float: the part of WriteShortestFloat after the digits.
inline char* WriteDecimal(char* out, std::uint32_t sig, int exponent) {
  const int size = CountDigits(sig);
  const int output_exp = exponent + size - 1;  // value = d.ddd × 10^output_exp
  if (BelowOne(output_exp)) return PutDigits(PutZeroPoint(out, output_exp), sig, size);  // 1234e-6 -> 0.001234
  if (output_exp < -4 || output_exp >= 16) {
    // d[.ddd]e±XX: the digits at p+1.., then the first moves before the point.
    char* p = out;
    if (size == 1) {
      *p++ = static_cast<char>('0' + sig);
    } else {
      p = PutDigits(p + 1, sig, size);
      out[0] = out[1];
      out[1] = '.';
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
  if (exponent >= 0) {
    // 1234e2 -> 123400
    char* p = PutDigits(out, sig, size);
    std::memset(p, '0', static_cast<std::size_t>(exponent));
    return p + exponent;
  }
  // 1234e-2 -> 12.34: the digits at out+1.., then the integer part moves one
  // place left (0 <= output_exp < 16, so 1 <= int_digits < size).
  const int int_digits = output_exp + 1;
  char* end = PutDigits(out + 1, sig, size);
  std::memmove(out, out + 1, static_cast<std::size_t>(int_digits));
  out[int_digits] = '.';
  return end;
}

}  // namespace

char* WriteShortestFloat(char* out, float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  *out = '-';
  out += bits >> 31;  // keep the '-' only when negative
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
  return WriteDecimal(out, dec.significand, dec.exponent);
}

char* WriteShortestFloats(char* out, const void* values, std::size_t n, char sep) {
  const auto* bytes = static_cast<const unsigned char*>(values);
  std::size_t i = 0;
  if (ShortestDecimalsAvailable()) {
    // The digits of up to a run of values at once, then their text.
    DecimalRun run;
    while (n - i >= 8) {
      const std::size_t count = std::min(DecimalRun::kSize, (n - i) / 8 * 8);
      ShortestDecimals(bytes + 4 * i, count, &run);
      for (std::size_t j = 0; j < count; ++j) {
        *out++ = sep;
        const unsigned char* at = bytes + 4 * (i + j);
        if ((run.special[j / 8] >> (j % 8)) & 1u) {
          float f;
          std::memcpy(&f, at, 4);
          out = WriteShortestFloat(out, f);
          continue;
        }
        out[0] = '-';
        out += at[3] >> 7;  // the sign bit (little-endian)
        const int point = run.exp[j] + run.size[j] - 1;  // |v| = d.ddd × 10^point
        if (BelowOne(point)) {  // the digits already text
          char* digits = PutZeroPoint(out, point);
          digits[0] = static_cast<char>(run.lead[j]);
          std::memcpy(digits + 1, &run.digits[j], 8);
          out = digits + run.size[j];
        } else {
          out = WriteDecimal(out, run.sig[j], run.exp[j]);
        }
      }
      i += count;
    }
  }
  for (; i < n; ++i) {
    float f;
    std::memcpy(&f, bytes + 4 * i, 4);
    *out++ = sep;
    out = WriteShortestFloat(out, f);
  }
  return out;
}

}  // namespace pe
