// HDF5: one dataset (default "pe") shaped [rows, cols] in the table's dtype
// (IEEE little-endian; float16 and bfloat16 as custom IEEE float types),
// chunked by row blocks of about 1 MiB, with every metadata entry as a
// scalar attribute (int64, double, or variable-length UTF-8 string).
// Uses the HDF5 C API behind RAII handles; the library's own error printing
// is silenced and its failures become pe::Error.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/formats/format.h"

namespace pe {

/// A writer that creates the HDF5 file `path` (the temporary file);
/// `display_name` is the user's target, for messages. `replacing`: the file
/// will replace an existing one (AtomicFile::replaces()), for its
/// WritebackPolicy (core/base/output.h), or synced. `gzip_level`: deflate
/// 1-9 (with the shuffle filter), 0 none.
std::unique_ptr<TableWriter> MakeHdf5Writer(const std::string& path,
                                            const std::string& display_name,
                                            bool replacing = false, int gzip_level = 0);

/// Like MakeHdf5Writer, but adds the dataset to the existing HDF5 file
/// `path` (a TableSet: one dataset per tensor).
std::unique_ptr<TableWriter> MakeHdf5AppendWriter(const std::string& path,
                                                  const std::string& display_name,
                                                  bool replacing = false, int gzip_level = 0);

/// Opens dataset `dataset` of an HDF5 file (empty: "pe", else the only
/// dataset in the root group). Reads float datasets of rank 1 or 2 (leading
/// dimensions of size 1 are dropped) in row blocks via hyperslabs.
std::unique_ptr<RowSource> OpenHdf5(const std::string& path,
                                    const std::string& dataset);

/// The datasets reached by hard links from the root group, by name (at most
/// 10,000), for opening every tensor of a file. Throws pe::Error (input)
/// when the file is not HDF5.
std::vector<std::string> ListHdf5Datasets(const std::string& path);

}  // namespace pe
