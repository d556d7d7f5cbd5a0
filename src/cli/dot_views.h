// The flags of `pe dot`'s views and pictures (--view, --title, --label,
// axes, colours, the views' own knobs), and the resize flags turned into
// the request's learned tables (pe::DotRequest::read_learned).
#pragma once

#include <CLI/CLI.hpp>
#include <pe/dot.h>

#include "cmd_dot.h"

namespace pe::cli {

/// The plot flags shared by every view and the decay curve.
void AddPlotControlFlags(CLI::App& cmd, DotOptions& o);

/// The resize flags of `o` as `request`'s fields: the first one given
/// (resize_flag), --resize-from, --resize-rule, --from-grid,
/// --prefix-tokens, and the reader of each learned table with its options
/// per rule (the flags over the source's config).
void SetResizeRequest(const DotOptions& o, pe::DotRequest* request);

}  // namespace pe::cli
