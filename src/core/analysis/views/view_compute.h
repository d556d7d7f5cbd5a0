// The views of `pe dot --view` from their inputs: inline specs (already
// parsed into SchemeSpecs) and table files, with the view's options. One
// path for the CLI (cli/dot_views.cc) and the library API: what a view
// computes lives in rope_views / table_views / relative_views; this file
// resolves the inputs (RoPE frequencies from a spec, an inv_freq tensor or
// cos/sin tables; head biases from slopes or tables; exact values from a
// recipe) and checks that the view applies to each.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/views/rope_views.h"
#include "core/analysis/views/view_data.h"
#include "core/schemes/registry.h"
#include "core/base/table.h"

namespace pe {

/// One input of a view: a spec (inline or the scheme flags) or a file.
struct ViewInput {
  std::string name;                ///< in legends and errors
  std::optional<SchemeSpec> spec;  ///< a generated table; else `path`
  std::string path;
  bool from_flags = false;  ///< the --scheme flags (a file's recipe for the precision view)
  /// What the input is, for subtitles: the spec as written (or SpecSummary
  /// of the flags); empty for a file (its name, shape and metadata are read
  /// when a subtitle needs them). Kept when `name` becomes a --label.
  std::string params;
  /// A table made in memory (a learned table resized by `pe dot --resize-rule`); else `spec` or `path`.
  std::shared_ptr<const DenseTable> table;
  /// grid view: this input's grid ("HxW") and prefix rows, over ViewOptions' (-1 / "": those)
  std::string grid;
  std::int64_t prefix_tokens = -1;
};

/// A spec's parameters in one line: "sincos-2d · d_model=64 · grid=14x14",
/// the scheme's own keys that matter to a picture, defaults left out.
std::string SpecSummary(const SchemeSpec& spec);

// ViewOptions, the options of the views, is the public struct of
// include/pe/view.h (through view_data.h).


/// The inputs `texts` name: an inline spec ("rope:head-dim=64,max-len=4096",
/// core/schemes/inline_spec.h; named as written) or a table file (named by its base
/// name). Throws pe::Error (usage) naming the input for a bad inline spec.
std::vector<ViewInput> ViewInputsOf(const std::vector<std::string>& texts);

/// The view a `pe dot` of `first_input` gets when none is named: by the
/// scheme of an inline spec, a RoPE file (cos and sin or inv_freq, with no
/// `tensor` chosen) → qk, else the scheme a file's metadata records, or
/// `flags_scheme` when there is no input (DefaultView). kDecay when
/// nothing else applies (or the scheme is unknown: the decay path reports it).
ViewKind ChooseView(const std::string& first_input, const std::string& tensor, const std::string& flags_scheme);

/// Computes `view` of `inputs`. Throws pe::Error (usage) for a view that
/// does not apply to an input, naming both; (input/io) when reading fails.
ViewData ComputeView(ViewKind view, const ViewOptions& o, const std::vector<ViewInput>& inputs);

/// The rotary frequencies of a RoPE input: a rope/xpos spec, or a file
/// holding inv_freq (with cos and sin for the context), or cos and sin.
/// Throws pe::Error (usage) for any other input, naming it.
RopeSource RopeSourceOf(const ViewInput& in);

/// True when `path` holds inv_freq, or cos and sin (a RoPE file).
bool IsRopeFile(const std::string& path);

/// The info of a file's first tensor; empty when the file cannot be opened.
TableInfo FirstTensorInfo(const std::string& path);

}  // namespace pe
