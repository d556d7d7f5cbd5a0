#include "core/base/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace pe {
namespace {

constexpr DTypeTraits kTraits[] = {
    {DType::kFloat16, "float16", 2, "<f2", "F16", 11},
    {DType::kBFloat16, "bfloat16", 2, "", "BF16", 8},
    {DType::kFloat32, "float32", 4, "<f4", "F32", 24},
    {DType::kFloat64, "float64", 8, "<f8", "F64", 53},
};

struct Alias {
  std::string_view alias;
  DType dtype;
};
constexpr Alias kAliases[] = {
    {"f16", DType::kFloat16},  {"fp16", DType::kFloat16},
    {"half", DType::kFloat16}, {"bf16", DType::kBFloat16},
    {"f32", DType::kFloat32},  {"fp32", DType::kFloat32},
    {"float", DType::kFloat32}, {"f64", DType::kFloat64},
    {"fp64", DType::kFloat64}, {"double", DType::kFloat64},
};

}  // namespace

const DTypeTraits& Traits(DType dtype) {
  return kTraits[static_cast<int>(dtype)];
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (const auto& t : kTraits)
    if (t.name == name) return t.dtype;
  for (const auto& a : kAliases)
    if (a.alias == name) return a.dtype;
  return std::nullopt;
}

std::string DTypeNames() {
  std::string out;
  for (const auto& t : kTraits) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

std::uint16_t DoubleToHalfBits(double value) {
  // Via the exact binary value: scale into the half grid and let the
  // hardware's round-to-nearest-even on double do the rounding (the scaled
  // value is an integer-or-half candidate, so no double rounding occurs:
  // std::nearbyint rounds the exact double once).
  std::uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  double a = std::fabs(value);
  if (std::isnan(value)) return sign | 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;  // rounds to infinity
  if (a < std::ldexp(1.0, -14)) {          // subnormal range: step 2^-24
    auto m = static_cast<std::uint16_t>(std::nearbyint(std::ldexp(a, 24)));
    return sign | m;  // m == 1024 carries into the smallest normal: correct
  }
  int exp;
  std::frexp(a, &exp);  // a = f * 2^exp, f in [0.5, 1)
  int e = exp - 1;      // a in [2^e, 2^(e+1))
  double scaled = std::nearbyint(std::ldexp(a, 10 - e));  // in [1024, 2048]
  auto mant = static_cast<std::uint32_t>(scaled);
  if (mant == 2048) {
    mant = 1024;
    ++e;
  }
  if (e > 15) return sign | 0x7c00;
  return sign | static_cast<std::uint16_t>(((e + 15) << 10) | (mant - 1024));
}

double HalfBitsToDouble(std::uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int e = (bits >> 10) & 0x1f;
  int m = bits & 0x3ff;
  if (e == 0) return sign * std::ldexp(m, -24);
  if (e == 31) return m ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(m + 1024, e - 25);
}

std::uint16_t DoubleToBFloat16Bits(double value) {
  if (std::isnan(value)) return std::signbit(value) ? 0xffc0 : 0x7fc0;
  // Round the double to bfloat16 precision (8 significant bits) in one step,
  // then truncate the now-exact float32 bits.
  int exp;
  double f = std::frexp(value, &exp);
  double r = std::ldexp(std::nearbyint(std::ldexp(f, 8)), exp - 8);
  if (std::fabs(value) < std::ldexp(1.0, -126)) {  // bf16 subnormals
    r = std::ldexp(std::nearbyint(std::ldexp(value, 133)), -133);
  }
  auto fl = static_cast<float>(r);  // exact unless it overflows to inf
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(fl) >> 16);
}

double BFloat16BitsToDouble(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

double LoadAsDouble(const std::byte* data, DType dtype, std::size_t index) {
  switch (dtype) {
    case DType::kFloat16: {
      std::uint16_t b;
      std::memcpy(&b, data + 2 * index, 2);
      return HalfBitsToDouble(b);
    }
    case DType::kBFloat16: {
      std::uint16_t b;
      std::memcpy(&b, data + 2 * index, 2);
      return BFloat16BitsToDouble(b);
    }
    case DType::kFloat32: {
      float f;
      std::memcpy(&f, data + 4 * index, 4);
      return f;
    }
    case DType::kFloat64: {
      double d;
      std::memcpy(&d, data + 8 * index, 8);
      return d;
    }
  }
  return 0;
}

void StoreFromDouble(std::byte* data, DType dtype, std::size_t index,
                     double value) {
  switch (dtype) {
    case DType::kFloat16: {
      std::uint16_t b = DoubleToHalfBits(value);
      std::memcpy(data + 2 * index, &b, 2);
      return;
    }
    case DType::kBFloat16: {
      std::uint16_t b = DoubleToBFloat16Bits(value);
      std::memcpy(data + 2 * index, &b, 2);
      return;
    }
    case DType::kFloat32: {
      auto f = static_cast<float>(value);
      std::memcpy(data + 4 * index, &f, 4);
      return;
    }
    case DType::kFloat64:
      std::memcpy(data + 8 * index, &value, 8);
      return;
  }
}

namespace {

// The smallest normal of `dtype` is 2^MinNormalExponent(dtype).
int MinNormalExponent(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return -14;
    case DType::kBFloat16: return -126;
    case DType::kFloat32: return -126;
    default: return -1022;
  }
}

}  // namespace

UlpRule::UlpRule(DType dtype)
    : dtype_(dtype),
      p_(Traits(dtype).mantissa_bits),
      min_exp_(MinNormalExponent(dtype)),
      min_normal_bits_(static_cast<std::uint64_t>(MinNormalExponent(dtype) + 1023) << 52) {}

double UlpOf(double value, DType dtype) {
  if (std::isfinite(value)) return UlpRule(dtype)(value);
  // NaN and infinities: what the frexp/ldexp formula always gave (NaN fails
  // |v| >= smallest normal: that normal's ulp; glibc's frexp gives ±inf the
  // exponent 0, so 2^(-1-(p-1))); tests/core/base/ulp_test.cc keeps the formula.
  const int p = Traits(dtype).mantissa_bits;
  return std::ldexp(1.0, (std::isnan(value) ? MinNormalExponent(dtype) : -1) - (p - 1));
}

}  // namespace pe
