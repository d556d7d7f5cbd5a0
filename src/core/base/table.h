// Tables and row blocks: the one interface through which data flows in pe.
//
// A table is a row-major matrix [rows, cols] of one DType; row r is position
// `start + r` for positional tables. Nothing in pe needs a whole table in
// memory: producers (scheme generators, file readers) implement RowSource and
// fill any block of rows on demand; consumers (writers, analyses) pull blocks
// of BlockRows() rows at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/base/dtype.h"

namespace pe {

/// One metadata value: an integer, a real or a string.
using MetaValue = std::variant<std::int64_t, double, std::string>;

/// Ordered key/value metadata (the order is kept in every format). Set and
/// Find cost O(1) on average (a hash index beside the ordered entries), so
/// reading a file with many keys stays linear.
class Metadata {
 public:
  /// Replaces the value of `key` (keeping its place), else appends it.
  void Set(const std::string& key, MetaValue value);
  /// nullptr when the key is absent.
  const MetaValue* Find(const std::string& key) const;
  const std::vector<std::pair<std::string, MetaValue>>& entries() const {
    return entries_;
  }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::string, MetaValue>> entries_;
  std::unordered_map<std::string, std::size_t> index_;  ///< key -> position in entries_
};

/// The most metadata keys a reader takes from one file (safetensors
/// `__metadata__`, JSON `meta`): pe's own files hold about 20; a file with
/// more is refused rather than read slowly.
inline constexpr std::size_t kMaxMetadataKeys = kMaxMetadataEntries;

/// A metadata value as text ("10000", "0.5", "sinusoidal"); reals use the
/// shortest round-trip form.
std::string MetaToString(const MetaValue& value);

/// The value of `key` as a number: an integer, a real, or text that is a
/// number whole ("10000", "1e4", as std::stod reads it); nullopt when the
/// key is absent or its text is not one.
std::optional<double> MetaNumber(const Metadata& meta, const std::string& key);

/// The value of `key` as text (MetaToString), "" when absent.
std::string MetaText(const Metadata& meta, const std::string& key);

/// The integer value of `key` (a finite real is rounded), else `fallback`
/// (absent, text, or not finite).
std::int64_t MetaIntOr(const Metadata& meta, const std::string& key, std::int64_t fallback);

/// The shape, dtype and provenance of a table.
struct TableInfo {
  std::string name = "pe";  ///< tensor name (HDF5 dataset, JSON key)
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  DType dtype = DType::kFloat32;
  Metadata meta;
  /// The tensor's logical shape when it is not [rows, cols]: [n] for a
  /// vector (rows = n, cols = 1), [a, b, c] for a 3-D tensor viewed as
  /// [a*b, c]. Empty means [rows, cols]. Formats that carry a shape
  /// (NPY, HDF5, safetensors, multi-tensor JSON) write this one.
  std::vector<std::int64_t> shape;

  std::size_t row_bytes() const {
    return static_cast<std::size_t>(cols) * Traits(dtype).size;
  }
};

/// The shape a writer should record: info.shape when set, else [rows, cols].
std::vector<std::int64_t> LogicalShape(const TableInfo& info);

/// Bytes of the whole table; throws pe::Error (usage) when rows * cols *
/// element size overflows 64 bits or exceeds kMaxTableBytes.
std::uint64_t CheckedTableBytes(std::int64_t rows, std::int64_t cols,
                                DType dtype);

/// The largest table pe will describe: 2^50 bytes (1 PiB). Beyond it no disk
/// could hold the result and the number is certainly a typo.
inline constexpr std::uint64_t kMaxTableBytes = std::uint64_t{1} << 50;

/// A producer of rows. Implementations: scheme generators, file readers.
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual const TableInfo& info() const = 0;
  /// Fills rows [first, first + count) into `out`, which holds
  /// count * info().row_bytes() bytes in info().dtype, row-major.
  /// REQUIRES: 0 <= first, count >= 0, first + count <= info().rows.
  /// Throws pe::Error when the rows cannot be produced (a truncated file).
  virtual void ReadRows(std::int64_t first, std::int64_t count,
                        std::byte* out) = 0;
  /// True when ReadRows may be called from several threads at once on
  /// disjoint rows (generators); file readers keep the default, false.
  virtual bool concurrent_reads() const { return false; }
  /// Rows [first, first + count) where they lie, as ReadRows would write
  /// them, when the source holds them so (a mapped C-order .npy in this
  /// machine's byte order, a mapped safetensors tensor;
  /// core/base/mapped_file.h): valid while the source
  /// lives, readable from any thread. nullptr otherwise: use ReadRows.
  /// Rows read through a view must be handed back with ReleaseRows before
  /// anything computed from them is used.
  virtual const std::byte* ViewRows(std::int64_t /*first*/, std::int64_t /*count*/) { return nullptr; }
  /// Done with rows of ViewRows: their pages may leave the process (the
  /// page cache keeps them), and a file that shrank while they were read
  /// (its lost pages read as zeros) throws pe::Error, as ReadRows would.
  /// A no-op for rows that were not viewed.
  virtual void ReleaseRows(std::int64_t /*first*/, std::int64_t /*count*/) {}
};

/// How many rows make a block for a table with rows of `row_bytes` bytes:
/// about 1 MiB per block, at least one row, never more than `rows`.
std::int64_t BlockRows(std::size_t row_bytes, std::int64_t rows);

/// A whole table in memory. For tests, small tables and analyses that truly
/// need random access; streaming code uses RowSource instead.
struct DenseTable {
  TableInfo info;
  std::vector<double> values;  ///< rows * cols, row-major, as doubles
  double at(std::int64_t row, std::int64_t col) const {
    return values[static_cast<std::size_t>(row * info.cols + col)];
  }
};

/// Reads every row of `source` into a DenseTable (values widened to double).
/// Throws pe::Error (usage) when the table has more than `max_elements`.
DenseTable ReadAll(RowSource& source,
                   std::int64_t max_elements = std::int64_t{1} << 28);

/// A RowSource over rows held in memory (values in `info.dtype`); used by
/// tests and by readers of formats that cannot stream (JSON).
class MemoryRowSource : public RowSource {
 public:
  MemoryRowSource(TableInfo info, std::vector<std::byte> bytes);
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count,
                std::byte* out) override;

 private:
  TableInfo info_;
  std::vector<std::byte> bytes_;
};

}  // namespace pe
