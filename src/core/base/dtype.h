// DType: the element types a table can hold, and one traits table that every
// format consults (name, size, NPY descr, safetensors name).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <pe/types.h>

namespace pe {

// enum class DType is public (include/pe/types.h).

struct DTypeTraits {
  DType dtype;
  std::string_view name;         ///< "float32": the spelling used by --dtype
  std::size_t size;              ///< bytes per element
  std::string_view npy_descr;    ///< "<f4"; empty when NPY cannot hold it
  std::string_view safetensors;  ///< "F32"
  int mantissa_bits;             ///< significand precision p, incl. hidden bit
};

/// The traits of `dtype`. Never fails.
const DTypeTraits& Traits(DType dtype);

/// Looks a dtype up by its name ("float32", also "f32", "fp32"); nullopt if
/// the name is unknown.
std::optional<DType> DTypeFromName(std::string_view name);

/// The comma-separated list of dtype names, for help and error messages.
std::string DTypeNames();

/// Reads element `index` of a buffer of `dtype` as a double (exact: every
/// supported dtype is a subset of double).
double LoadAsDouble(const std::byte* data, DType dtype, std::size_t index);

/// Stores `value` into element `index` of a buffer of `dtype`, rounding to
/// nearest even when `dtype` is narrower than double. Use only where the
/// value is already representable or where double rounding is acceptable;
/// exact generators round from their own high-precision values instead.
void StoreFromDouble(std::byte* data, DType dtype, std::size_t index,
                     double value);

/// The distance between `value` and the next representable number of
/// `dtype` away from zero (unit in the last place); for 0, the smallest
/// subnormal. Always positive (numpy.spacing of -x is negative).
double UlpOf(double value, DType dtype);

/// UlpOf(v, dtype) for one dtype, with the dtype's constants looked up once
/// and the power of two built from v's exponent bits (no frexp/ldexp), for
/// loops over every entry of a table: the same value as UlpOf for every v
/// (tests/core/base/ulp_test.cc checks it against the frexp/ldexp formula).
class UlpRule {
 public:
  explicit UlpRule(DType dtype);
  double operator()(double v) const {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    bits &= ~(std::uint64_t{1} << 63);  // |v|
    if (bits >= kInfBits) return UlpOf(v, dtype_);  // NaN, ±inf: UlpOf's own answer
    // The exponent e of |v| = f·2^e, f in [1, 2) (frexp's exponent - 1),
    // or the dtype's smallest normal exponent below it (its subnormals share
    // the smallest normal's ulp); a double subnormal is below every dtype's
    // smallest normal.
    int e = static_cast<int>(bits >> 52) - 1023;
    if (bits < min_normal_bits_) e = min_exp_;
    const int k = e - (p_ - 1);  // ulp = 2^k, k >= -1074 for every dtype
    const std::uint64_t out = k >= -1022 ? static_cast<std::uint64_t>(k + 1023) << 52  // a normal double
                                         : std::uint64_t{1} << (k + 1074);               // a subnormal double
    double r;
    std::memcpy(&r, &out, 8);
    return r;
  }
  /// err / (*this)(v), by a multiplication where 1/ulp is a double (every
  /// ulp but float64's subnormal ones): the same value, since both are the
  /// correctly rounded err·2^-k.
  double Ratio(double err, double v) const {
    const double u = (*this)(v);
    std::uint64_t bits;
    std::memcpy(&bits, &u, 8);
    if (bits < (std::uint64_t{1} << 52) || bits >= (std::uint64_t{2046} << 52)) return err / u;  // 1/u not normal
    const std::uint64_t inv_bits = (std::uint64_t{2046} << 52) - bits;  // 2^(1023 - (k + 1023) + 1023) = 2^-k
    double inv;
    std::memcpy(&inv, &inv_bits, 8);
    return err * inv;
  }
  DType dtype() const { return dtype_; }
  int p() const { return p_; }              ///< significand bits, hidden bit included
  int min_exp() const { return min_exp_; }  ///< the smallest normal is 2^min_exp()

 private:
  static constexpr std::uint64_t kInfBits = std::uint64_t{0x7ff} << 52;
  DType dtype_;
  int p_;
  int min_exp_;
  std::uint64_t min_normal_bits_;  ///< bits of 2^min_exp_ as a double
};

/// IEEE half and bfloat16 bit conversions (round to nearest even).
std::uint16_t DoubleToHalfBits(double value);
double HalfBitsToDouble(std::uint16_t bits);
std::uint16_t DoubleToBFloat16Bits(double value);
double BFloat16BitsToDouble(std::uint16_t bits);

}  // namespace pe
