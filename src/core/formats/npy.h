// NPY 1.0 (numpy's .npy): magic "\x93NUMPY", version 1.0, a little-endian
// u16 header length, a Python-literal dict
//   {'descr': '<f4', 'fortran_order': False, 'shape': (rows, cols), }
// padded with spaces and a final '\n' so that the data starts at a multiple
// of 64 bytes, then the data row-major (C order), little-endian.
// Layout in docs/formats.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/formats/format.h"
#include "core/base/output.h"

namespace pe {

/// A writer of NPY 1.0 to `sink`. Throws pe::Error (usage) for bfloat16,
/// which numpy cannot represent.
std::unique_ptr<TableWriter> MakeNpyWriter(ByteSink& sink);

/// Reads an NPY file (versions 1.0, 2.0, 3.0) of float16/32/64, either byte
/// order, C or Fortran order. Leading dimensions of size 1 are dropped
/// ((1, L, D) is an [L, D] table); 1-D arrays are one column. Validates the
/// header against the file size before reading anything. A complex64 /
/// complex128 [L, n] array (c8/c16) is read as its float [L, n, 2] pairs,
/// marked as cos/sin pairs (core/formats/cos_sin_pairs.h).
std::unique_ptr<RowSource> OpenNpy(const std::string& path);

/// Where an NPY array's data is and how to read it (ParseNpyHeader).
struct NpyLayout {
  TableInfo info;                ///< rows, cols, dtype, shape (as OpenNpy describes it)
  std::uint64_t data_offset = 0; ///< from the start of the NPY bytes
  bool big_endian = false;
  bool fortran = false;          ///< column-major (never for one row or column)
};

/// The most bytes of an NPY array ParseNpyHeader looks at (the longest
/// prefix plus numpy's header size limit).
inline constexpr std::size_t kNpyMaxHeadBytes = 12 + 10000;

/// Parses the header of an NPY array of `total_size` bytes (a file, or an
/// .npz member) from `head`, its first min(total_size, kNpyMaxHeadBytes)
/// bytes. Checks the dtype (float16/32/64), the shape, that the data fits
/// in total_size, and the Fortran-order size limit. Throws pe::Error
/// (input) prefixed with `what`.
NpyLayout ParseNpyHeader(std::string_view head, std::uint64_t total_size, const std::string& what);

/// The NPY 1.0 header (magic through padding) for a [rows, cols] table.
std::string NpyHeader(const TableInfo& info);

}  // namespace pe
