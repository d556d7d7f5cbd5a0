// The block pump: streams a RowSource into a TableWriter, block by block, in
// order, with the blocks produced on several threads when the source allows
// it (RowSource::concurrent_reads, e.g. the scheme generators).
//
// Contract: the writer sees Begin, then WriteRows for rows 0.. in order, each
// block once, then End, on the calling thread, exactly as with one thread.
// Memory: at most 2·threads + 1 blocks of about kPumpBlockBytes each.
// An exception on a producer or in the writer stops every thread and is
// rethrown on the calling thread.
//
// The settings (WriteSettings, core/formats/format.h) are the caller's,
// passed with each write: `pe generate`'s --threads, --compress, --fsync
// and its progress bar.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/formats/format.h"
#include "core/base/table.h"

namespace pe {

/// Bytes per block pumped (several rows; one row when a row is larger).
inline constexpr std::size_t kPumpBlockBytes = std::size_t{512} << 10;

/// The same for writers that encode on the workers (CSV, JSON): a block's
/// text is about three times its binary size, and smaller blocks let the
/// writing of one overlap the formatting of the next from the start.
inline constexpr std::size_t kPumpTextBlockBytes = std::size_t{128} << 10;

/// The number of cores (at least 1).
int CoreCount();

/// Threads to use for `settings.threads` (0 = CoreCount()).
int EffectiveThreads(const WriteSettings& settings);

/// A lower bound of the size of `info` written in `format` (the binary
/// payload, or two characters per value for text; 0 when compressed).
unsigned long long MinOutputBytes(const TableInfo& info, Format format, const WriteSettings& settings = {});

/// Streams every row of `source` to `writer` (Begin, WriteRows..., End).
void PumpRows(RowSource& source, TableWriter& writer, const WriteSettings& settings = {});

/// Fills rows [first, first + count) of `source` into `out` using up to
/// `threads` threads (1 when the source is not concurrent_reads()).
void ReadRowsParallel(RowSource& source, std::int64_t first, std::int64_t count,
                      std::byte* out, int threads);

}  // namespace pe
