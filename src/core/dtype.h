// DType: the element types a table can hold, and one traits table that every
// format consults (name, size, NPY descr, safetensors name).
#pragma once

#include <cstddef>
#include <cstdint>
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
/// subnormal.
double UlpOf(double value, DType dtype);

/// IEEE half and bfloat16 bit conversions (round to nearest even).
std::uint16_t DoubleToHalfBits(double value);
double HalfBitsToDouble(std::uint16_t bits);
std::uint16_t DoubleToBFloat16Bits(double value);
double BFloat16BitsToDouble(std::uint16_t bits);

}  // namespace pe
