// The resize flags of `pe generate` and `pe verify` (--resize-from,
// --resize-rule, --mode, --antialias, ...): a learned table read from any
// file or model folder pe reads (pe::ReadLearnedTable), resized by
// pe/resize.h.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include <pe/resize.h>

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

// The table itself: pe::ReadLearnedTable (pe/resize.h).

/// The ResizeOptions the flags and the source's config state: the rule
/// from --resize-rule or config model_type, the source grid from
/// --from-grid or image_size / patch_size.
ResizeOptions ResizeOptionsFrom(const ResizeFlags& flags, const LearnedTable& table, const std::string& grid,
                                std::int64_t max_len, std::int64_t frames, std::int64_t merge_size);

}  // namespace pe::cli
