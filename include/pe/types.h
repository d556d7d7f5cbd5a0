// pe/types.h: the vocabulary of the public API: element types, metadata and
// the description of one tensor.
//
// DType is shared with pe's internal core (core/base/dtype.h includes this
// header). All types here are plain values: copyable, no hidden state.
#pragma once

#include <pe/export.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace pe {

/// The element types a table can hold. Values are IEEE binary16, bfloat16
/// (the upper half of a binary32), binary32 and binary64, little-endian in
/// memory as on every platform pe builds for.
enum class DType : std::uint8_t { kFloat16, kBFloat16, kFloat32, kFloat64 };

/// "float16", "bfloat16", "float32", "float64" (the spelling of --dtype).
PE_API std::string_view DTypeName(DType dtype);

/// Every DType, in the order above (as --dtype's help lists them).
PE_API std::vector<DType> AllDTypes();

/// Bytes per element: 2, 2, 4, 8.
PE_API std::size_t DTypeSize(DType dtype);

/// Parses a dtype name ("float32", also "f32", "fp32", "bf16", ...).
/// Throws pe::Error (kUsage) naming the known types when it is unknown.
PE_API DType ParseDType(std::string_view name);

/// One metadata value: an integer, a real or a string.
using MetaValue = std::variant<std::int64_t, double, std::string>;

/// Ordered key/value metadata, as stored in a file (HDF5 attributes,
/// safetensors __metadata__, JSON "meta"), in file order.
using MetaList = std::vector<std::pair<std::string, MetaValue>>;

/// Metadata bounds, per file (docs/security.md, "Work bounded by the
/// input"): at most kMaxMetadataEntries entries, a key or string value of
/// at most kMaxMetadataValueBytes, and kMaxMetadataBytes of keys and
/// string values together. Writers refuse more, naming the key; readers
/// summarise a safetensors value past them and refuse a JSON table's.
inline constexpr std::size_t kMaxMetadataEntries = 65536;
inline constexpr std::size_t kMaxMetadataValueBytes = std::size_t{64} << 10;
inline constexpr std::size_t kMaxMetadataBytes = std::size_t{1} << 20;

/// The value of `key` in `meta`, or nullptr.
PE_API const MetaValue* FindMeta(const MetaList& meta, std::string_view key);

/// A metadata value as text: integers in decimal, reals in the shortest
/// form that reads back to the same double ("0.1", "10000"), strings as is.
PE_API std::string MetaText(const MetaValue& value);

/// The shape, element type and metadata of one tensor.
///
/// Every tensor is read as a row-major matrix [rows, cols]: row r of a
/// positional table is position start + r. `shape` is the tensor's logical
/// shape ([n] for a vector: rows = n, cols = 1; [a, b, c] for a 3-D tensor:
/// rows = a*b, cols = c); its product is always rows * cols.
struct TensorInfo {
  std::string name;                 ///< tensor name ("pe", "cos", "slopes", ...)
  std::vector<std::int64_t> shape;  ///< logical shape, never empty
  DType dtype = DType::kFloat32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  MetaList metadata;                ///< the table's metadata (shared by its tensors)

  /// cols * DTypeSize(dtype).
  std::size_t row_bytes() const { return static_cast<std::size_t>(cols) * DTypeSize(dtype); }
  /// rows * row_bytes(): the size of a buffer holding the whole tensor.
  std::size_t byte_size() const { return static_cast<std::size_t>(rows) * row_bytes(); }
};

}  // namespace pe
