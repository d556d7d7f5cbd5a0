// GGUF codec: bytes -> header, metadata and tensor infos (no files, no
// threads). Follows ggml's specification, ggml-org/llama.cpp docs/gguf.md,
// and gguf-py/gguf/constants.py for the type ids (see docs/gguf.md):
//
//   "GGUF" u32 version u64 n_tensors u64 n_kv
//   n_kv x { string key, u32 value_type, value }
//   n_tensors x { string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset }
//   padding to general.alignment (default 32), then the data section
//
// string = u64 length + bytes (no NUL); array = u32 element type, u64
// count, elements. Only little-endian v2 and v3 files are read: v1 (32-bit
// counts) and big-endian files are refused by name.
//
// Everything is checked against the bytes present before it is allocated
// or trusted: counts against the bytes left (each item has a minimum
// size), string lengths, nesting depth (kMaxGgufArrayDepth), n_dims <= 4,
// element-count products and byte sizes for overflow, each tensor inside
// the data section, aligned, and not overlapping another; duplicate keys
// and tensor names are refused. Array contents are kept only within a
// budget (long arrays such as a tokenizer's vocabulary are skipped, their
// count kept): memory stays bounded whatever the file says.
//
// GGUF dims are listed innermost first: ne[0] is the row length (the
// contiguous axis), so a tensor [ne0, ne1] is ne1 rows of ne0 values, the
// numpy shape (ne1, ne0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/dtype.h"

namespace pe {

/// Random-access bytes to parse (a file through pread, or memory).
class GgufBytes {
 public:
  virtual ~GgufBytes() = default;
  virtual std::uint64_t size() const = 0;
  /// Copies [offset, offset + n) into dst; REQUIRES offset + n <= size().
  virtual void Read(std::uint64_t offset, std::size_t n, void* dst) = 0;
};

/// Metadata value types (gguf-py GGUFValueType).
enum class GgufType : std::uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
std::string_view GgufTypeName(GgufType type);

/// The deepest array nesting read (arrays of arrays of ...).
inline constexpr int kMaxGgufArrayDepth = 8;
/// The most tensor dimensions (GGML_MAX_DIMS).
inline constexpr std::uint32_t kMaxGgufDims = 4;

struct GgufValue {
  GgufType type = GgufType::kU8;
  std::int64_t i = 0;   ///< signed integers and bool
  std::uint64_t u = 0;  ///< unsigned integers
  double f = 0;         ///< floats (f32 widened exactly)
  std::string s;        ///< string
  // arrays
  GgufType elem = GgufType::kU8;
  std::uint64_t count = 0;
  bool stored = true;            ///< false: too long, contents skipped (count kept)
  std::vector<GgufValue> items;  ///< the elements when stored

  bool is_number() const;
  /// The value as a double for numbers and bools; nullopt otherwise.
  std::optional<double> number() const;
  /// The value as an integer when it is an integer (or a float with an
  /// integral value) within int64; nullopt otherwise.
  std::optional<std::int64_t> integer() const;
  /// Short text: numbers shortest round-trip, strings as is, arrays as
  /// "[a, b, c]" (at most `max_items`, then "... (N items)").
  std::string ToText(std::size_t max_items = 8) const;
};

/// ggml tensor types (gguf-py GGMLQuantizationType).
struct GgmlTypeTraits {
  std::uint32_t id;
  std::string_view name;  ///< "F32", "Q4_K", "IQ2_XXS"
  std::uint32_t block;    ///< elements per block
  std::uint32_t bytes;    ///< bytes per block
};
/// Traits of a ggml type id, nullptr when unknown (or removed from ggml).
const GgmlTypeTraits* FindGgmlType(std::uint32_t id);
/// The pe dtype of a ggml type pe reads as a table (F32, F16, BF16, F64).
std::optional<DType> GgmlTableDType(std::uint32_t id);

struct GgufTensorInfo {
  std::string name;
  std::vector<std::uint64_t> ne;  ///< innermost first (ne[0] = row length)
  std::uint32_t type = 0;         ///< ggml type id (valid: FindGgmlType != nullptr)
  std::uint64_t offset = 0;       ///< from the start of the data section
  std::uint64_t nbytes = 0;       ///< bytes of data
  std::uint64_t elements = 1;
};

struct GgufFile {
  std::uint32_t version = 0;
  std::uint64_t alignment = 32;
  std::uint64_t data_start = 0;  ///< absolute offset of the data section
  std::uint64_t file_size = 0;
  std::vector<std::pair<std::string, GgufValue>> kv;  ///< file order
  std::vector<GgufTensorInfo> tensors;                 ///< file order

  const GgufValue* Find(const std::string& key) const;
  const GgufTensorInfo* FindTensor(const std::string& name) const;

  std::unordered_map<std::string, std::size_t> kv_index, tensor_index;
};

/// Parses and validates a GGUF file. `what` names it in errors ("'m.gguf'").
/// Throws pe::Error (input) with a one-line reason for anything malformed.
GgufFile ParseGguf(GgufBytes& bytes, const std::string& what);

}  // namespace pe
