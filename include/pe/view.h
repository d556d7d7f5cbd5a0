// pe/view.h: the views of `pe dot --view` as data, their CSV/JSON files and
// their pictures.
//
// A view is what a picture of an encoding shows, computed from table files
// and inline specs: RoPE's q·k decay and RoFormer's bound, the frequency
// spectrum and the scaled/unscaled ratio, the attention temperature,
// per-head biases (ALiBi, KERPLE, Sandwich), bucket staircases (T5,
// DeBERTa), 2-D patch similarity on the grid, per-column curves, precision
// and low-precision collisions. The numbers, the CSV and JSON bytes and
// the pictures are those of `pe dot INPUTS --view NAME -o x.csv --plot
// x.png` with the same options: the CLI calls the same code.
//
// Inputs are text: an inline spec "SCHEME:KEY=VALUE,..." (the keys are the
// CLI's flags without dashes: "rope:head-dim=64,max-len=4096,rope-scaling=
// llama3,factor=8"; a list value in brackets: short-factor=[1,1.5]), or
// the path of any table file pe reads.
//
// Thread safety: the functions keep no state; distinct calls may run at once.
//
// Example:
//   pe::ViewRequest r;
//   r.max_offset = 4095;
//   pe::View v = pe::ComputeView("qk", {"rope:head-dim=128,max-len=8192,base=500000",
//                                       "rope:head-dim=128,max-len=8192,base=500000,rope-scaling=llama3,factor=8,"
//                                       "original-max-position-embeddings=8192"}, r);
//   const pe::View::Series& s = v.series[0];      // s.x: offsets k; s.columns[0].values: mean q·k
//   pe::WriteViewFile(v, "qk.csv");               // as pe dot ... --view qk -o qk.csv
//   pe::PlotView(v, "qk.png");                    // as --plot qk.png (.png .svg .pdf)
#pragma once

#include <pe/export.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pe/error.h>
#include <pe/table.h>

namespace pe {

/// The options of a view: `pe dot`'s flags of the same names. Each view
/// reads the ones it uses and ignores the rest. (The library's core computes
/// views from exactly this struct.)
struct ViewOptions {
  /// Largest offset / distance / position (--max-offset). -1: the view's
  /// default (the context of a RoPE input; 63 distances for heads; ...).
  std::int64_t max_offset = -1;
  std::string tensor;                  ///< one tensor of a multi-tensor file (--tensor)
  std::vector<std::int64_t> columns;   ///< columns view: the columns (default 4,5,6,7)
  std::int64_t window = 64;            ///< collisions view: positions per window
  std::vector<std::string> collision_dtypes;  ///< collisions view: "bfloat16", "float16" (default both)
  std::vector<std::int64_t> patches;   ///< grid view: cells i·W+j (default: all, or 9 above 256 cells)
  std::string grid;                    ///< grid view: "HxW" of a file without metadata
  bool cls_token = false;              ///< grid view: row 0 of the file is a CLS token
  /// grid view: rows before the cells (class token, registers), left out; -1: none (1 with cls_token)
  std::int64_t prefix_tokens = -1;
};

/// A view's options and, optionally, the --scheme flags as a spec: a series
/// of its own, or, for the precision view of a file, the file's recipe (its
/// exact values).
struct ViewRequest : ViewOptions {
  std::optional<Spec> recipe;
};

/// A view's data: named series of columns over one x (curves), or panels
/// (heatmaps), with the words the picture uses.
struct View {
  struct Column {
    std::string name;            ///< CSV/JSON column name ("mean", "bound", "wavelength", ...)
    std::vector<double> values;  ///< one per x of its series
    bool draw = true;            ///< a line of the picture (else data only)
    bool dashed = false;
    std::string label;           ///< legend text; empty: the series name
  };
  struct Series {
    std::string name;            ///< the input it came from, as written
    std::vector<double> x;
    std::vector<Column> columns;
  };
  struct Panel {
    std::string title;
    std::int64_t rows = 0, cols = 0;
    std::vector<double> values;  ///< rows × cols, row-major
    /// Grid views of several tables: the table (input name) and the patch
    /// (grid row, column) the panel compares with every cell; "" and -1 otherwise.
    std::string series;
    std::int64_t patch_row = -1, patch_col = -1;
  };

  std::string name;  ///< "qk", "spectrum", ... (ViewNames())
  std::string title, subtitle, x_label, y_label, value_label, note;
  std::string x_name = "x";             ///< CSV/JSON name of x ("offset", "pair", "position", ...)
  bool log_x = false, log_y = false;    ///< the picture's default axes
  bool steps = false;                   ///< integer x drawn as steps (bucket staircases)
  std::vector<Series> series;
  std::vector<std::pair<double, std::string>> markers;  ///< marked x values (L_orig), or y with markers_on_y
  bool markers_on_y = false;
  std::vector<Panel> panels;            ///< grid views (heads, bias, grid); rows run down
  std::string row_label, col_label;
  bool signed_values = false;           ///< both signs (a diverging colour map)
};

/// The view names: qk, bound, spectrum, ratio, temperature, heads, bias,
/// offsets, buckets, grid, columns, precision, collisions.
PE_API std::vector<std::string> ViewNames();

/// The view `pe dot` draws for `inputs` when none is named (rope → "qk",
/// alibi → "heads", sincos-2d → "grid", t5-bucket → "buckets", ...; from
/// the first input's scheme or metadata); "decay" when none of these
/// applies (then ComputeDot in pe/analysis.h gives the curve).
PE_API std::string DefaultViewName(const std::vector<std::string>& inputs, const ViewRequest& request = {});

/// Computes view `name` ("" = DefaultViewName) of `inputs` (inline specs
/// and/or file paths; at least one, or request.recipe). Throws pe::Error
/// (kUsage) for an unknown view, a view that does not apply to an input
/// (naming both: "--view grid: needs a 2-D encoding ..."), a bad inline
/// spec ("input 'rope:...': ...") or option; (kInput/kIo) when a file
/// cannot be read.
PE_API View ComputeView(const std::string& name, const std::vector<std::string>& inputs, const ViewRequest& request = {});

/// The view as CSV (one header `series,<x>,<column>...`, one line per point
/// of every series; panels as panel,<row>,<col>,value, or with several
/// grids series,patch_row,patch_col,<row>,<col>,value) or JSON (schema
/// "pe.view/1"): the bytes `pe dot --view NAME -o x.csv` (x.json) writes.
/// Throws pe::Error (kUsage) for an unknown view name.
PE_API std::string ViewCsv(const View& view);
PE_API std::string ViewJson(const View& view);

/// Writes the view to `path` as CSV or JSON (by the extension, or
/// `format` "csv"/"json"), atomically, as `pe dot -o`. Throws pe::Error
/// (kUsage) for another extension, (kIo) when writing fails.
PE_API void WriteViewFile(const View& view, const std::string& path, const std::string& format = "");

/// The picture's controls: `pe dot`'s plot flags. Unset values follow the
/// view (a log y axis for wavelengths, viridis for one-signed values and
/// RdBu_r centred on 0 for signed ones).
struct PlotOptions {
  static constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
  std::string title;                  ///< --title
  std::optional<bool> log_x, log_y;   ///< --log-x, --log-y / --linear-y
  double x_min = kUnset, x_max = kUnset;  ///< --xlim
  double y_min = kUnset, y_max = kUnset;  ///< --ylim
  double vmin = kUnset, vmax = kUnset;    ///< --vmin, --vmax (heatmaps)
  std::string cmap;                   ///< --cmap: viridis, magma, cividis, RdBu, RdBu_r; empty: the view's
  int width = 960, height = 600;      ///< --size WxH: 200..10000 × 150..10000
  double train_len = kUnset;          ///< --train-len: shade x >= L
};

/// Draws the view to `path`: PNG, SVG (with <text>) or PDF by the
/// extension, atomically, as `pe dot --plot`. Throws pe::Error (kUsage)
/// for another extension or a bad option, (kIo) when writing fails.
PE_API void PlotView(const View& view, const std::string& path, const PlotOptions& options = {});

}  // namespace pe
