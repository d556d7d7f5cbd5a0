// numpy's .npz (np.savez, np.savez_compressed): a zip archive whose members
// are NPY arrays named "<key>.npy" (numpy/lib/npyio.py, _savez). Members are
// stored (np.savez) or deflated (np.savez_compressed); each is one tensor,
// named by its key. The NPY header codec is the .npy reader's
// (ParseNpyHeader); the container is core/containers/zip_archive.h with its
// bounds. Stored arrays are read in place, deflated ones inflated by row
// block as a stream.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/formats/npy.h"
#include "core/containers/zip_archive.h"
#include "core/base/table.h"

namespace pe {

/// One "<key>.npy" member of an .npz.
struct NpzEntry {
  std::string name;                 ///< the key ("cos"); the member is name + ".npy"
  const ZipMember* member = nullptr;
  std::optional<NpyLayout> layout;  ///< set when pe can read it as a table
  std::string problem;              ///< else why not ("unsupported dtype '<i8'")
};

/// The .npy members of an open archive, in archive order (other members,
/// which np.load would return as raw bytes, are skipped).
std::vector<NpzEntry> ReadNpzEntries(const ZipArchive& zip);

/// The names of the readable (float16/32/64) arrays of `path`.
std::vector<std::string> ListNpz(const std::string& path);

/// Opens array `name` of `path` (empty: "pe", else the only array; several
/// is an error listing them). Throws pe::Error (input) naming the file.
std::unique_ptr<RowSource> OpenNpz(const std::string& path, const std::string& name);

/// The same for an open archive.
std::unique_ptr<RowSource> OpenNpzEntry(std::shared_ptr<ZipArchive> zip, const NpzEntry& entry);

}  // namespace pe
