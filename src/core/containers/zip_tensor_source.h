// A table whose bytes are a region of one zip member: an .npz array (after
// its NPY header) or a PyTorch storage (from the tensor's offset). Rows are
// read block by block through ZipMemberReader: in place for a stored
// member, inflated as a stream for a deflated one.
#pragma once

#include <cstdint>
#include <memory>

#include "core/containers/zip_archive.h"
#include "core/base/table.h"

namespace pe {

/// The largest column-major (Fortran-order) array read; it is read whole
/// once and transposed by block.
inline constexpr std::uint64_t kMaxZipFortranBytes = std::uint64_t{256} << 20;

/// Rows [0, info.rows) of info.cols elements of info.dtype, stored from
/// byte `offset` of `member` (row-major, or column-major when `fortran`),
/// little-endian unless `big_endian`. REQUIRES: the region lies inside the
/// member (the caller has checked it), and `fortran` arrays are at most
/// kMaxZipFortranBytes.
std::unique_ptr<RowSource> MakeZipTensorSource(std::shared_ptr<ZipArchive> zip, const ZipMember& member,
                                               std::uint64_t offset, TableInfo info, bool big_endian,
                                               bool fortran);

}  // namespace pe
