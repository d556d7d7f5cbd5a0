// The resize flags of `pe generate` and `pe verify` (--resize-from,
// --resize-rule, --mode, --antialias, ...): a learned table read from any
// file or model folder pe reads, resized by pe/resize.h.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include <pe/resize.h>

#include "core/base/table.h"

namespace pe::cli {

struct ResizeFlags {
  std::string from;   ///< --resize-from SRC[:tensor]
  std::string rule;   ///< --resize-rule
  std::string mode;   ///< --mode
  bool antialias = false, no_antialias = false, align_corners = false, no_align_corners = false;
  std::int64_t prefix_tokens = -1;  ///< --prefix-tokens
  std::int64_t offset = -1;         ///< --offset
  std::string from_grid;            ///< --from-grid HxW
  double interpolate_offset = 0.1;  ///< --interpolate-offset
  bool interpolate_offset_given = false;
  const CLI::App* cmd = nullptr;
};

/// Adds the flags to `cmd` (--grid, --max-len, --frames and
/// --spatial-merge-size are the scheme flags of the same name).
void AddResizeFlags(CLI::App& cmd, ResizeFlags& flags);

/// A learned table as float32 rows, with where it came from.
struct LearnedTable {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> values;
  std::string source;      ///< "vit/model.safetensors: vit.embeddings.position_embeddings"
  std::string model_type;  ///< config.json model_type, when read from a model folder
  std::int64_t image_size = 0, patch_size = 0, merge_size = 0, pad_token_id = -1;
};

/// Reads SRC: a table file (npy, safetensors, HDF5, .pt, npz, JSON, CSV),
/// FILE:tensor for a file of several, or a model folder (its one position
/// embedding, or FOLDER:tensor; config.json gives model_type, image_size
/// and patch_size). `flag` names the flag in errors.
LearnedTable ReadLearnedTable(const std::string& src, const std::string& flag);

/// The ResizeOptions the flags and the source's config state: the rule
/// from --resize-rule or config model_type, the source grid from
/// --from-grid or image_size / patch_size.
ResizeOptions ResizeOptionsFrom(const ResizeFlags& flags, const LearnedTable& table, const std::string& grid,
                                std::int64_t max_len, std::int64_t frames, std::int64_t merge_size);

/// A resized table as a RowSource (float32, named "position_embeddings"),
/// its metadata saying the rule and the source.
std::unique_ptr<RowSource> ResizedSource(const ResizedTable& table, const std::string& source);

}  // namespace pe::cli
