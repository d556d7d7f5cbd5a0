// safetensors (https://github.com/huggingface/safetensors, format spec in its
// README): an 8-byte little-endian u64 N, an N-byte UTF-8 JSON header
//   {"__metadata__": {"scheme": "rope", ...},            (strings only)
//    "cos": {"dtype": "F32", "shape": [L, D], "data_offsets": [0, 4LD]},
//    "sin": {...}, ...}
// padded with spaces so that the data starts at a multiple of 8 bytes, then
// the tensors' bytes back to back (little-endian, C order), in header order.
// pe writes every tensor of a TableSet and every metadata entry (as its
// text). Layout in docs/formats.md and docs/schemes.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/formats/format.h"
#include "core/base/output.h"
#include "core/base/table_set.h"

namespace pe {

/// The header (length prefix, JSON, padding) for `set`'s tensors.
std::string SafetensorsHeader(const TableSet& set);

/// Writes every tensor of `set` to `sink`: the header, then each tensor's
/// rows in blocks (streams; needs no seekable file), produced on `threads`
/// threads (0: all cores).
void WriteSafetensors(TableSet& set, ByteSink& sink, int threads = 0);

/// A TableWriter of one tensor (named info.name, metadata info.meta), for
/// WriteTable().
std::unique_ptr<TableWriter> MakeSafetensorsTableWriter(ByteSink& sink);

/// Opens tensor `name` of a safetensors file (empty: "pe", else the only
/// tensor; several and none named "pe" is an error listing them). Tensors
/// of rank 0-1 are one column; rank >= 2 is viewed as [prod(leading), last].
/// The header is validated against the file size before anything is
/// allocated; __metadata__ values that read as numbers become numbers.
std::unique_ptr<RowSource> OpenSafetensors(const std::string& path, const std::string& name);

/// The tensors of a safetensors file (name, shape, dtype, metadata), for
/// listing; no data is read.
std::vector<TableInfo> ListSafetensors(const std::string& path);

/// The same two for a file already open (a model folder's shard, opened
/// under the folder rule: core/base/model_folder.h); `fd` stays the caller's
/// (the source keeps a duplicate), `shown` names it in messages.
std::unique_ptr<RowSource> OpenSafetensorsFd(int fd, const std::string& shown, const std::string& name);
std::vector<TableInfo> ListSafetensorsFd(int fd, const std::string& shown);

}  // namespace pe
